"""Zoom (Ctrl+L, tui/zoom.py): the focused pane alone at the full width, the tree and
the other panes hidden, the gauge and the input kept; the same key restores the layout as
it was. The zoom follows the active pane; splitting or closing the zoomed pane un-zooms."""

from __future__ import annotations

import contextlib

import pytest

from .conftest import SIZE, agent_named, idle, root_id, say, settle


async def _family(session, children: int) -> None:
    root = root_id(session)
    await say(session, root, "Parent talk.")
    for n in range(children):
        await session.command(root, f"/fork --name kid{n}")


@contextlib.asynccontextmanager
async def _app_with_panes(bench, panes: int, size=SIZE):
    """The app on a root with two children, `panes` panes shown (the last one active)."""
    async with bench.prep() as session:
        await _family(session, 2)
    app = bench.app()
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        for _ in range(panes - 1):
            await pilot.press("f2")
            await idle(pilot)
        assert len(app.panes.all()) == panes
        yield app, pilot


def _layout(app) -> dict:
    """What the zoom must give back: each pane shown and its width, the tree and its width
    (a hidden widget's size is the one it had when last shown: not looked at)."""
    tree = app.agent_tree
    return {"panes": [(p.agent_id, p.display, p.outer_size.width) for p in app.panes.all()],
            "tree": (tree.display, tree.outer_size.width if tree.display else None),
            "tree_width": app.tree_width}


def _title(pane) -> str:
    return pane.title.render().plain


@pytest.mark.parametrize("panes,size", [(1, SIZE), (2, SIZE), (3, SIZE), (3, (80, 24))])
async def test_zoom_shows_the_active_pane_alone_and_the_same_key_restores_the_layout(
        bench, panes, size):
    async with _app_with_panes(bench, panes, size) as (app, pilot):
        before = _layout(app)
        active = app.panes.active
        width = app.size.width

        await pilot.press("ctrl+l")
        await idle(pilot)
        assert not app.agent_tree.display
        assert [p.display for p in app.panes.all()] == [p is active for p in app.panes.all()]
        assert active.outer_size.width == width  # the full width: no tree, no divider
        assert app.gauge.display and app.prompt_input.display
        assert app.gauge.outer_size.width == width
        assert "zoomed (Ctrl+L restores)" in _title(active)
        assert app.focused is app.prompt_input

        await pilot.press("ctrl+l")
        await idle(pilot)
        assert _layout(app) == before
        assert "zoomed" not in _title(active)


async def test_unzoom_gives_back_a_hidden_tree_and_a_chosen_tree_width(bench):
    async with _app_with_panes(bench, 2) as (app, pilot):
        await pilot.press("alt+shift+right", "alt+shift+right")  # a width of the user's
        await idle(pilot)
        await pilot.press("f4")  # and the tree hidden
        await idle(pilot)
        before = _layout(app)
        assert before["tree_width"] is not None and not before["tree"][0]

        await pilot.press("ctrl+l")
        await idle(pilot)
        await pilot.press("alt+shift+left", "alt+shift+left", "alt+shift+left")  # while zoomed
        await idle(pilot)
        assert app.agent_tree.display
        await pilot.press("ctrl+l")
        await idle(pilot)
        assert _layout(app) == before
        await pilot.press("f4")
        await idle(pilot)
        assert app.agent_tree.outer_size.width == app.tree_width == before["tree_width"]


async def test_the_zoom_follows_the_active_pane_and_the_agent_chosen(bench):
    async with _app_with_panes(bench, 2) as (app, pilot):
        root, kid0 = root_id(app.session), agent_named(app.session, "kid0")
        kid1 = agent_named(app.session, "kid1")
        await pilot.press("ctrl+l")
        await idle(pilot)

        await pilot.press("ctrl+w")  # the next pane: zoomed in its turn
        await idle(pilot)
        shown = [p for p in app.panes.all() if p.display]
        assert [p.agent_id for p in shown] == [root] and app.focused_agent == root
        assert "zoomed" in _title(shown[0])
        assert not any("zoomed" in _title(p) for p in app.panes.all() if not p.display)

        await pilot.press("alt+down")  # the root's first child, in the zoomed pane
        await idle(pilot)
        shown = [p for p in app.panes.all() if p.display]
        assert [p.agent_id for p in shown] == [kid0] and app.focused_agent == kid0
        assert not app.agent_tree.display

        await pilot.press("ctrl+t")  # the tree, shown to choose an agent ...
        await idle(pilot)
        assert app.agent_tree.display and app.agent_tree.has_focus
        await pilot.press("end", "enter")  # ... the last one: kid1
        await idle(pilot)
        shown = [p for p in app.panes.all() if p.display]
        assert [p.agent_id for p in shown] == [kid1] and app.focused_agent == kid1
        assert "zoomed" in _title(shown[0])
        assert not app.agent_tree.display  # hidden again once chosen
        assert app.focused is app.prompt_input

        await pilot.press("ctrl+l")
        await idle(pilot)
        assert all(p.display for p in app.panes.all()) and app.agent_tree.display


async def test_closing_or_splitting_while_zoomed_unzooms(bench):
    async with _app_with_panes(bench, 3) as (app, pilot):
        before = _layout(app)
        await pilot.press("ctrl+l")
        await idle(pilot)
        assert not app.agent_tree.display and len([p for p in app.panes.all() if p.display]) == 1
        await pilot.press("f3")  # the zoomed pane closed: the two others, and the tree
        await idle(pilot)
        assert app.zoomed_from is None
        assert [p.display for p in app.panes.all()] == [True, True]
        assert app.agent_tree.display
        assert app.agent_tree.outer_size.width == before["tree"][1]
        assert not any("zoomed" in _title(p) for p in app.panes.all())

        await pilot.press("ctrl+l")
        await idle(pilot)
        assert app.zoomed_from is not None
        await pilot.press("f2")  # a new pane is seen beside the others
        await idle(pilot)
        assert app.zoomed_from is None
        assert len(app.panes.all()) == 3 and all(p.display for p in app.panes.all())


async def test_one_pane_zoomed_stays_zoomed_on_f3(bench):
    """F3 closes nothing with a single pane, so the zoom stays."""
    async with _app_with_panes(bench, 1) as (app, pilot):
        await pilot.press("ctrl+l", "f3")
        await idle(pilot)
        assert app.zoomed_from is not None and not app.agent_tree.display


def test_zoomed_pane(bench, snap_compare):
    """Two panes, the second (kid0) zoomed: the full width, "zoomed" in its title, the
    gauge and the input below."""
    bench.prepare(lambda s: _family(s, 2))
    app = bench.app()

    async def run_before(pilot):
        await settle(pilot)
        await pilot.press("f2")
        await idle(pilot)
        await pilot.press("ctrl+l")
        await idle(pilot)
        assert app.zoomed_from is not None

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_help_lists_the_zoom_key():
    from ikigai_tui.tui.keymap import binding_groups
    from ikigai_tui.tui.screens.help import help_keys

    rows = dict(help_keys(binding_groups()["the main screen"], {}))
    assert rows["Ctrl+L"] == "Zoom the pane to the full width / back"
