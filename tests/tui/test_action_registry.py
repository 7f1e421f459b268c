"""One action registry (issue 24, item 4): every key binding the full screen uses is in
tui/bindings.py, which the [keymap] check, Help and the key bar read; the keymap module
imports neither the app nor a screen; the app's mixins are typed with host Protocols the
app satisfies, not with the app."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import subprocess
import sys
import typing

from textual.binding import Binding
from textual.dom import DOMNode

import ikigai_tui.tui
from ikigai_tui.tui import bindings as registry
from ikigai_tui.tui.actions import ActionsHost
from ikigai_tui.tui.news import NewsHost
from ikigai_tui.tui.outbox import QueueHost
from ikigai_tui.tui.widgets.history_bar import PagedView

from .conftest import SIZE, idle, settle


def _as_fired(bindings) -> set[tuple]:
    """Bindings as Textual holds them once bound: one per key ("n,escape" is two)."""
    return {(b.key, b.action, b.description, b.id, b.priority)
            for b in Binding.make_bindings(bindings)}


def _textual_own(node: DOMNode) -> set[tuple]:
    """The bindings Textual's own classes give `node` (TextArea's, Tree's, App's ...)."""
    return _as_fired(b for cls in type(node).__mro__
                     if cls.__module__.startswith("textual")
                     for b in cls.__dict__.get("BINDINGS", ()) if isinstance(b, Binding))


def _ours(cls: type) -> list[tuple[str, list]]:
    """(class, its BINDINGS) for each class of the project in `cls`'s ancestry that sets
    BINDINGS itself."""
    return [(c.__qualname__, c.__dict__["BINDINGS"]) for c in cls.__mro__
            if c.__module__.startswith("ikigai_tui") and "BINDINGS" in c.__dict__]


def _in_registry(tables: list[tuple[str, list]]) -> list[str]:
    """The project's BINDINGS that are not one of the registry's tables."""
    owned = [table for table in registry.OWNERS.values()]
    return [name for name, table in tables if not any(table is t for t in owned)]


def _live_nodes(app) -> list[DOMNode]:
    return [app, *(node for screen in app.screen_stack
                   for node in (screen, *screen.query("*")))]


def _unregistered(app) -> list[str]:
    """Every binding the live app and the widgets of each screen it shows hold that is
    neither the registry's nor given by a Textual class (compared as bound: per key)."""
    known = _as_fired(b for table in registry.OWNERS.values() for b in table)
    palette = registry.command_palette()  # Textual binds it (its own id), as the registry says
    known |= {(palette.key, palette.action, palette.description, None, True)}
    found = []
    for node in _live_nodes(app):
        allowed = known | _textual_own(node)
        for bound in (b for keyed in node._bindings.key_to_bindings.values() for b in keyed):
            entry = (bound.key, bound.action, bound.description, bound.id, bound.priority)
            if entry not in allowed:
                found.append(f"{type(node).__name__}: {entry}")
        found += [f"{type(node).__name__}: {name}" for name in _in_registry(_ours(type(node)))]
    return found


async def test_the_bindings_of_the_live_app_and_its_screens_are_the_registrys(bench):
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert any(node is app.prompt_input for node in _live_nodes(app))
        assert _unregistered(app) == []
        await pilot.press("f1")
        await idle(pilot)
        assert type(app.screen).__name__ == "HelpScreen"
        assert _unregistered(app) == []

        # A binding added on the fly, that the registry does not hold, is caught.
        app.prompt_input._bindings.bind("ctrl+b", "bogus", "Bogus", show=False)
        assert _unregistered(app) == ["PromptInput: ('ctrl+b', 'bogus', 'Bogus', None, False)"]


def test_every_screen_and_widget_takes_its_bindings_from_the_registry():
    """The dialogs a test cannot open without a session (the preview, /compact's, the
    memory dialogs ...): every class of the TUI that sets BINDINGS sets a registry table."""
    classes = []
    for module in pkgutil.walk_packages(ikigai_tui.tui.__path__, "ikigai_tui.tui."):
        loaded = importlib.import_module(module.name)
        classes += [cls for _name, cls in inspect.getmembers(loaded, inspect.isclass)
                    if issubclass(cls, DOMNode) and cls.__module__ == module.name]
    names = {cls.__name__ for cls in classes if "BINDINGS" in cls.__dict__}
    assert {"IkigaiApp", "PromptInput", "AgentTreeView", "HelpScreen", "PreviewScreen",
            "PreviewList", "MessageScreen", "MatchingScreen", "ConfirmScreen",
            "CompactPreviewScreen", "MemoryDiffScreen", "MemoryScreen",
            "MemoryFileScreen"} <= names
    assert [name for cls in classes for name in _in_registry(_ours(cls))] == []

    class Stray(DOMNode):  # a screen of the TUI with a binding of its own
        __module__ = "ikigai_tui.tui.screens.stray"
        BINDINGS = [Binding("x", "stray", "Stray")]

    assert [name.rsplit(".", 1)[-1] for name in _in_registry(_ours(Stray))] == ["Stray"]


def test_the_keymap_and_the_registry_load_neither_the_app_nor_a_screen():
    code = ("import sys, ikigai_tui.tui.keymap, ikigai_tui.tui.bindings; "
            "print('\\n'.join(m for m in sys.modules if m.startswith('ikigai_tui.tui.')))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True).stdout.split()
    assert "ikigai_tui.tui.keymap" in loaded
    assert "ikigai_tui.tui.app" not in loaded
    screens_or_widgets = ("ikigai_tui.tui.screens", "ikigai_tui.tui.widgets")
    assert [m for m in loaded if m.startswith(screens_or_widgets)] == []


def _members(protocol: type) -> set[str]:
    names: set[str] = set()
    for cls in protocol.__mro__:
        if cls is typing.Protocol or cls is object or not getattr(cls, "_is_protocol", False):
            continue
        names |= set(cls.__dict__.get("__annotations__", {}))
        names |= {n for n, v in cls.__dict__.items()
                  if callable(v) or isinstance(v, property)} - set(vars(typing.Protocol))
    return {n for n in names if not n.startswith("__")}


async def test_the_app_has_what_its_mixins_host_protocols_name(bench):
    """The mixins are typed with Protocols, not with the app (nor the history bar with
    the scrollback): the live app has every member each names (so a Protocol cannot
    drift from the app unseen)."""
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for protocol in (ActionsHost, NewsHost, QueueHost):
            members = _members(protocol)
            assert {"session", "panes", "schedule_refresh"} <= members
            assert [m for m in members if not hasattr(app, m)] == [], protocol.__name__
        scrollback = app.panes.active.scrollback  # the history bar's PagedView, likewise
        members = _members(PagedView)
        assert {"history", "jump_to_ratio", "scroll_y"} <= members
        assert [m for m in members if not hasattr(scrollback, m)] == []
