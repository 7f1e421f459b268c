"""The `/` menu: typing `/` in the empty input opens a live list of the commands above
it (the registry's name, usage and one-line description), filtered as the name is typed
(prefix matches first, then substrings, then the letters in order); once the name is
followed by a space, it shows the command's usage as a hint while its arguments are
typed.

While the list is open, the input hands it its keys (PromptInput.menu): up / down move
in it, Tab or Enter on a partial name complete it to the chosen command ("/name " and
the usage hint for one that takes arguments; Tab first extends a name that several
share, as a shell does: /ma gives /mark, listing /mark /marks), Enter on a whole name that needs no argument runs it
(typing "/clear" then Enter runs /clear), Esc closes it and keeps the text. Closed, or
showing only a hint, it takes none of them: up / down walk the input's history again,
Tab completes marks and agents, Esc is the app's. Its keys are bindings.COMMAND_MENU
(ids, F1).

`matches` and `menu_state` are plain functions of the text: the widget only draws.
"""

from __future__ import annotations

import os
from typing import NamedTuple

from rich.style import Style
from rich.text import Text
from textual.widget import Widget

from ikigai_tui.core.commands.parse import CommandSpec
from ikigai_tui.core.commands.registry import REGISTRY
from ikigai_tui.tui.bindings import COMMAND_MENU

__all__ = ["CommandMenu", "MenuState", "matches", "menu_state", "needs_arguments",
           "takes_arguments"]

ROWS = 8  # commands listed at once at most (the list scrolls to keep the chosen in view)


def rows_for(screen_height: int) -> int:
    """Commands listed at once on a screen this tall: a quarter of it, 8 at most (at 24
    lines, 6 and the "more" line, so the scrollback keeps most of the screen)."""
    return max(2, min(ROWS, screen_height // 4))


def takes_arguments(spec: CommandSpec) -> bool:
    return len(spec.usage.split()) > 1


def needs_arguments(spec: CommandSpec) -> bool:
    """An argument that is not optional (its usage has a word outside [ ])."""
    words = spec.usage.split()[1:]
    return bool(words) and not words[0].startswith("[")


def _in_order(letters: str, name: str) -> bool:
    found = iter(name)
    return all(ch in found for ch in letters)


def matches(typed: str) -> list[CommandSpec]:
    """The commands a typed name may stand for: the exact name, then the names it begins,
    then those it is part of, then those with its letters in order."""
    typed = typed.lower()
    specs = list(REGISTRY)
    exact = [s for s in specs if s.name == typed]
    prefix = [s for s in specs if s.name.startswith(typed) and s.name != typed]
    inner = [s for s in specs if typed in s.name and not s.name.startswith(typed)]
    loose = [s for s in specs if typed not in s.name and _in_order(typed, s.name)]
    return [*exact, *prefix, *inner, *loose]


def _extends(typed: str) -> bool:
    """Several names begin with `typed` and they share more of it (/ma: /mark, /marks):
    Tab extends it as a shell does, until a choice is made with up / down."""
    names = [s.name for s in REGISTRY if s.name.startswith(typed)]
    return len(names) > 1 and len(os.path.commonprefix(names)) > len(typed)


class MenuState(NamedTuple):
    """What the menu shows for a text: the commands a name may be (`specs`), or the
    command whose arguments are being typed (`hint`); neither: nothing to show."""

    specs: list[CommandSpec]
    hint: CommandSpec | None = None


def menu_state(text: str) -> MenuState:
    if not text.startswith("/") or text.startswith("//") or "\n" in text:
        return MenuState([])
    name, space, _ = text[1:].partition(" ")
    if space:
        return MenuState([], REGISTRY.get(name))
    return MenuState(matches(name))


class CommandMenu(Widget):
    """The list (or the usage hint) over the input; hidden when closed."""

    DEFAULT_CSS = """
    CommandMenu {
        display: none;
        height: auto;
        max-height: 10;
        padding: 0 1;
        background: $panel;
    }
    CommandMenu.-open { display: block; }
    """

    def __init__(self, *, id: str | None = None, keymap: dict[str, str] | None = None) -> None:
        super().__init__(id=id)
        self.state = MenuState([])
        self.active = False  # opened by a "/" in the empty input, until closed
        self._text: str | None = None  # the text it shows for
        self.index = 0  # the chosen command of the list
        self.moved = False  # chosen with up / down (else the first is)
        self._top = 0  # the first row shown
        keymap = keymap or {}
        # key -> action, the user's [keymap] over the table's keys
        self.keys = {key: b.action for b in COMMAND_MENU
                     for key in keymap.get(b.id or "", b.key).split(",")}

    # ---- the input's text and keys ---------------------------------------------------

    def open(self) -> None:
        """A "/" typed in the empty input: the menu follows the text from now on."""
        self.active = True
        self.follow("/")

    def follow(self, text: str) -> None:
        """The input's text changed: while open the menu follows it, and closes once the
        text is no command being typed."""
        if not self.active or text == self._text:
            return
        if not text.startswith("/") or text.startswith("//") or "\n" in text:
            self.close()
            return
        self.show(text)

    def key(self, key: str, text: str) -> str | None:
        """A key of the input while the menu is active: None when the menu does not take
        it; else the text the input must now hold ("" for the same text)."""
        action = self.keys.get(key)
        if action is None:
            return None
        self.follow(text)  # keys typed faster than the input's Changed messages arrive
        if not self.is_open:
            return None
        if action == "menu_close":
            self.close()
            return ""
        if not self.listing:
            return None
        if action in ("menu_up", "menu_down"):
            self.move(-1 if action == "menu_up" else 1)
            return ""
        spec = self.chosen
        assert spec is not None
        if action == "menu_complete" and not self.moved and _extends(text[1:]):
            return None  # the input's Tab: the names' common prefix, and the list of them
        if action == "menu_choose" and spec.name == text[1:] and not needs_arguments(spec):
            self.close()
            return None  # the input sends it: the command runs
        return f"/{spec.name} " if takes_arguments(spec) else f"/{spec.name}"

    # ---- what it shows ---------------------------------------------------------------

    @property
    def is_open(self) -> bool:
        return self.has_class("-open")

    @property
    def listing(self) -> bool:
        """Open with commands to choose from (it takes the input's keys then)."""
        return self.is_open and bool(self.state.specs)

    @property
    def chosen(self) -> CommandSpec | None:
        specs = self.state.specs
        return specs[self.index] if specs else None

    def show(self, text: str) -> None:
        """Open on `text` (or follow it while open): what it shows for it."""
        self._text = text
        state = menu_state(text)
        if state.specs != self.state.specs:
            self.index = self._top = 0
            self.moved = False
        rows = self._rows(self.state)
        self.state = state
        self.set_class(bool(state.specs) or state.hint is not None, "-open")
        self.refresh(layout=self._rows(state) != rows)  # a new height: the input moves

    def close(self) -> None:
        self.active = False
        self._text = None
        if self.is_open:
            self.remove_class("-open")
        self.state = MenuState([])

    def move(self, step: int) -> None:
        specs = self.state.specs
        if not specs:
            return
        self.moved = True
        self.index = (self.index + step) % len(specs)
        if self.index < self._top:
            self._top = self.index
        elif self.index >= self._top + self.rows:
            self._top = self.index - self.rows + 1
        self.refresh()

    # ---- drawing ---------------------------------------------------------------------

    @property
    def rows(self) -> int:
        return rows_for(self.app.size.height if self.is_attached else 40)

    def _rows(self, state: MenuState) -> tuple:
        if state.hint is not None:
            return ("hint", state.hint.name)  # its usage wraps by its length
        return ("list", min(len(state.specs), self.rows + 1))

    def render(self) -> Text:
        width = max(10, self.content_size.width)
        if self.state.hint is not None:
            return self._hint(self.state.hint, width)
        specs = self.state.specs
        shown = specs[self._top:self._top + self.rows]
        name_w = max(len(s.name) for s in shown) + 1 if shown else 0
        muted = Style(dim=True)
        lines = []
        for offset, spec in enumerate(shown):
            chosen = self._top + offset == self.index
            line = Text(no_wrap=True, overflow="ellipsis", end="")
            line.append("❯ " if chosen else "  ", Style(bold=True))
            line.append(f"/{spec.name}".ljust(name_w + 2), Style(bold=chosen))
            line.append(spec.summary, muted if not chosen else Style())
            line.truncate(width, overflow="ellipsis")
            if chosen:
                line.stylize(Style(reverse=True))
            lines.append(line)
        more = len(specs) - len(shown)
        if more:
            lines.append(Text(f"  … {more} more (↑ ↓)", style=muted, end=""))
        return Text("\n").join(lines)

    @staticmethod
    def _hint(spec: CommandSpec, width: int) -> Text:
        text = Text(end="")
        text.append(spec.usage, Style(bold=True))
        text.append("\n")
        text.append(spec.summary, Style(dim=True))
        return text
