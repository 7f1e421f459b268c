"""The agent tree, in a small harness App: labels, focus, in-place refresh, selection."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import pytest
from rich.cells import cell_len
from rich.text import Text
from textual.app import App, ComposeResult
from textual.pilot import Pilot

from ikigai_tui.tui.widgets.agent_tree import AgentRow, AgentTreeView, agent_label

from tests.tui.harness import SIZE, WIDGETS_CSS, screenshot


# ---- AgentTreeView --------------------------------------------------------------------


ROWS = [
    AgentRow("a1", "main", "idle", 0, 12.4, None),
    AgentRow("a2", "researcher", "working", 2, 85.0, "a1"),
    AgentRow("a3", "writer", "dead", 0, None, "a1"),
    AgentRow("a4", "helper", "idle", 0, 3.0, "a2"),
    AgentRow("b1", "second root", "idle", 1, None, None),
]


class TreeApp(App):
    CSS_PATH = WIDGETS_CSS

    def __init__(self) -> None:
        super().__init__()
        self.selected: list[str] = []

    def compose(self) -> ComposeResult:
        yield AgentTreeView(id="agents")

    def on_agent_tree_view_selected(self, message: AgentTreeView.Selected) -> None:
        self.selected.append(message.agent_id)


@contextlib.asynccontextmanager
async def shown(focused: str, rows: list[AgentRow] = ROWS, *, focus_tree: bool = False
                ) -> AsyncIterator[tuple[TreeApp, Pilot, AgentTreeView]]:
    """The harness app running, its tree showing `rows` with `focused` as the focused agent."""
    app = TreeApp()
    async with app.run_test(size=SIZE) as pilot:
        tree = app.query_one(AgentTreeView)
        tree.refresh_agents(rows, focused)
        if focus_tree:
            tree.focus()
        await pilot.pause()
        yield app, pilot, tree


def _all_nodes(tree: AgentTreeView) -> list:
    out = []

    def walk(node):
        for child in node.children:
            out.append(child)
            walk(child)

    walk(tree.root)
    return out


def _label(tree: AgentTreeView, agent_id: str) -> Text:
    node = tree.node_for(agent_id)
    assert node is not None
    return node.label


async def test_tree_renders_labels_with_glyphs_usage_and_unread():
    async with shown("a2") as (app, pilot, tree):
        assert [n.data for n in _all_nodes(tree)] == ["a1", "a2", "a4", "a3", "b1"]
        assert all(n.is_expanded for n in _all_nodes(tree))
        assert tree.node_for("a4").parent is tree.node_for("a2")
        assert _label(tree, "a1").plain == "○ main 12%"
        assert _label(tree, "a2").plain == "▶ ● researcher 85% ✉2"
        assert _label(tree, "a3").plain == "✕ writer"
        assert _label(tree, "b1").plain == "○ second root ✉1"
        screenshot(app, "tree")
        tree.focus()
        await pilot.pause()
        screenshot(app, "tree_focused")


async def test_focused_is_bold_and_has_the_cursor_dead_is_dim():
    async with shown("a2") as (app, pilot, tree):
        assert tree.cursor_node is tree.node_for("a2")
        focused = agent_label(ROWS[1], True)
        assert any("bold" in str(span.style) for span in focused.spans)
        dead = _label(tree, "a3")
        assert any("dim" in str(span.style) for span in dead.spans)
        tree.refresh_agents(ROWS, "a4")
        await pilot.pause()
        assert tree.cursor_node is tree.node_for("a4")
        assert _label(tree, "a2").plain.startswith("● ")
        assert _label(tree, "a4").plain.startswith("▶ ")


async def test_refresh_in_place_keeps_the_nodes():
    async with shown("a1") as (app, pilot, tree):
        before = _all_nodes(tree)
        changed = [*ROWS]
        changed[1] = AgentRow("a2", "researcher", "idle", 0, 90.0, "a1")
        tree.refresh_agents(changed, "a1")
        await pilot.pause()
        after = _all_nodes(tree)
        assert len(after) == len(before) == 5
        assert all(a is b for a, b in zip(after, before, strict=True))
        assert _label(tree, "a2").plain == "○ researcher 90%"
        # A new agent rebuilds, keeping the order and the focus.
        grown = [*changed, AgentRow("b2", "child", "working", 0, None, "b1")]
        tree.refresh_agents(grown, "b2")
        await pilot.pause()
        assert [n.data for n in _all_nodes(tree)] == ["a1", "a2", "a4", "a3", "b1", "b2"]
        assert tree.cursor_node is tree.node_for("b2")


async def test_refresh_does_not_steal_the_cursor_from_the_user():
    async with shown("a1", focus_tree=True) as (app, pilot, tree):
        await pilot.press("down", "down")
        assert tree.cursor_node is tree.node_for("a4")
        tree.refresh_agents(ROWS, "a1")  # e.g. a status update
        await pilot.pause()
        assert tree.cursor_node is tree.node_for("a4")
        assert app.selected == []


async def test_selecting_a_node_posts_selected():
    async with shown("a1", focus_tree=True) as (app, pilot, tree):
        assert app.selected == []  # moving the cursor programmatically selects nothing
        await pilot.press("down", "enter")
        await pilot.pause()
        assert app.selected == ["a2"]
        assert all(n.is_expanded for n in _all_nodes(tree))
        await pilot.click(AgentTreeView, offset=(8, 4))  # line 4: "second root"
        await pilot.pause()
        assert app.selected == ["a2", "b1"]


async def test_labels_are_sanitized_and_not_markup():
    evil = AgentRow("x", "[red]evil\x1b]52;c;AAAA\x07\nline2", "idle", 0, None, None)
    async with shown("x", [evil]) as (app, pilot, tree):
        plain = _label(tree, "x").plain
        assert "\x1b" not in plain and "\x07" not in plain and "\n" not in plain
        assert "[red]evil" in plain


async def test_the_cursor_row_keeps_the_warning_colour_of_its_usage():
    rows = [AgentRow("a", "main", "idle", 0, 85.0, None), AgentRow("b", "kid", "idle", 0, 85.0, "a")]
    async with shown("a", rows) as (app, pilot, tree):

        def usage_colour(y: int):
            strip = app.screen._compositor.render_strips()[tree.region.y + y]
            return next(s.style.color for s in strip if s.text.strip() == "85%"
                        or s.text.endswith(" 85%"))

        assert tree.cursor_line == 0
        for focused in (False, True):
            if focused:
                tree.focus()
                await pilot.pause()
            assert usage_colour(0) == usage_colour(1)  # the cursor row and a plain row


@pytest.mark.parametrize("new", [False, True])
def test_a_narrow_row_drops_the_id_then_cuts_the_name_never_drops_it(new):
    """Issue 23 review, item 8: the narrowest tree read `▶ ○ root (7…` (cut mid-id) and
    `└─ ○ …  new` (the name gone, the badge kept). The id goes whole, first; then the
    name's end, with "…"; the badge goes before the name's first letter would."""
    rows = [AgentRow("7a1b2c3d", "root (7a1b2c)", "idle", 0, 1.0, None, 900, 800, new=new),
            AgentRow("8e9f0a1b", "kiddo (8e9f)", "idle", 2, 1.0, "7a1b2c3d", 900, 800, new=new)]
    for row in rows:
        name, short = row.label.split(" ")
        for width in range(6, 40):
            line = agent_label(row, False, width=width).plain
            assert cell_len(line) <= width, (width, line)
            if "(" in line:
                assert short in line, (width, line)  # never cut mid-id
            shown = line[2:].split(" ")[0].rstrip("…")
            assert shown and name.startswith(shown), (width, line)  # some of the name, always
            if width >= len(f"○ {name}"):
                assert line[2:].startswith(name), (width, line)
