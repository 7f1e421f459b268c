"""The scrollback's styled lines are kept by the line they were made from
(widgets/styled_lines.py): a line scrolled to another row is not styled again, and what is
painted is always what Textual's own styling makes of the lines shown now (a changed line,
another width, another theme, a find's highlight, a selection)."""

from __future__ import annotations

import contextlib
import re

from textual._styles_cache import StylesCache
from textual.geometry import Offset, Region
from textual.selection import Selection

from .conftest import SIZE, idle, settle, talked_app
from .test_history_bar import ready, ten_thousand

REPLY = "".join(f"line {i} of a long reply\n\n" for i in range(60))


def _painted(sb) -> list:
    return sb.render_lines(Region(0, 0, sb.size.width, sb.size.height))


def _fresh(sb) -> list:
    """The rows as Textual styles them with nothing kept from before."""
    return StylesCache().render_widget(sb, Region(0, 0, sb.size.width, sb.size.height))


@contextlib.asynccontextmanager
async def _streaming(bench, reply: str):
    """(pilot, the active scrollback) with `reply` streaming into it; ended on the way out."""
    app = await talked_app(bench, "Hello.", delay=0.0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        sb = app.panes.active.scrollback
        sb.stream(reply)
        await pilot.pause(0.1)
        yield pilot, sb
        sb.end_stream()
        await idle(pilot)


async def test_a_line_scrolled_to_another_row_is_not_styled_again(bench):
    async with _streaming(bench, REPLY) as (pilot, sb):
        before = _painted(sb)
        sb.stream("line 60 of a long reply\n\nline 61 of a long reply\n\n")  # it scrolls
        await pilot.pause(0.1)
        after = _painted(sb)
        moved = len(after) - 4  # each line went 4 rows up (two lines, two blank)
        assert [s.text for s in after[:moved]] == [s.text for s in before[4:]]
        assert all(new is old for new, old in zip(after[:moved], before[4:]))
        assert after == _fresh(sb)


async def test_the_lines_painted_are_those_shown_now(bench):
    async with _streaming(bench, REPLY + "the last words") as (pilot, sb):
        app = pilot.app
        first = _painted(sb)
        assert first == _fresh(sb)
        top = int(sb.scroll_y)

        sb.stream(" and more")  # the last line changed, in place (the view does not move)
        await pilot.pause(0.1)
        changed = _painted(sb)
        assert int(sb.scroll_y) == top
        assert changed == _fresh(sb) and changed != first
        assert "the last words and more" in changed[-1].text

        sb.refresh()  # a repaint of lines that did not change: served as they were
        assert _painted(sb) == changed

        shown = {sb.render_line(y).text.split(" of")[0].strip() for y in range(sb.size.height)}
        word = sorted(w for w in shown if w.startswith("line"))[0]
        sb.show_found(re.compile(re.escape(word)), None)  # find highlights a word
        found = _painted(sb)
        assert found == _fresh(sb) and found != changed
        sb.show_found(None, None)  # and stops
        assert _painted(sb) == changed

        app.screen.selections = {sb: Selection(Offset(0, top), Offset(4, top + 1))}
        await pilot.pause()
        selected = _painted(sb)
        assert selected == _fresh(sb) and selected != changed
        app.screen.selections = {}
        await pilot.pause()

        sb.styles.tint = "red 40%"  # the same lines, styled otherwise
        await pilot.pause()
        tinted = _painted(sb)
        assert tinted == _fresh(sb) and tinted != changed
        sb.styles.tint = None
        await pilot.pause()
        assert _painted(sb) == changed

        app.theme = "textual-light" if app.theme != "textual-light" else "textual-dark"
        await pilot.pause(0.1)  # another background: every line styled again
        themed = _painted(sb)
        assert themed == _fresh(sb)
        assert [s.text for s in themed] == [s.text for s in changed] and themed != changed

        await pilot.resize_terminal(SIZE[0] - 20, SIZE[1])  # another width
        await pilot.pause(0.2)
        narrow = _painted(sb)
        assert narrow == _fresh(sb) and len(narrow[0].text) < len(themed[0].text)


async def test_a_pane_a_row_shorter_keeps_its_styled_lines(bench):
    """The input below the panes grows a line as the user types: every pane is a row
    shorter, and its lines (the same, one row up when it follows) are not styled again."""
    async with _streaming(bench, REPLY + "the last words") as (pilot, sb):
        before, top = _painted(sb), int(sb.scroll_y)
        await pilot.resize_terminal(SIZE[0], SIZE[1] - 1)
        await pilot.pause(0.2)
        after, moved = _painted(sb), int(sb.scroll_y) - top
        assert len(after) == len(before) - 1 and after == _fresh(sb)
        assert all(new is old for new, old in zip(after, before[moved:]))


def _one_object_a_kind(strips) -> bool:
    return len({id(s) for s in strips}) == len({tuple(s) for s in strips})


async def test_a_bar_and_a_pane_style_each_kind_of_row_once(bench):
    """A history bar's rows (track, thumb), a pane's and the containers' around it (their
    background) are a few kinds: each is styled once, also when they are resized, and is
    what Textual's styling of them shows now (a thumb moved, a theme)."""
    await ten_thousand(bench)
    async with bench.app().run_test(size=SIZE) as pilot:
        sb = await ready(pilot)
        bar, pane = sb.vertical_scrollbar, pilot.app.panes.active
        containers = [pilot.app.query_one(name) for name in ("#body", "#main", "#panes")]
        for widget in (bar, pane, *containers):
            painted = _painted(widget)
            assert painted == _fresh(widget) and _one_object_a_kind(painted)
            assert len(set(map(id, painted))) < len(painted) / 4
        track = _painted(bar)[0]  # (the thumb is at the end)
        await pilot.resize_terminal(SIZE[0], SIZE[1] - 1)  # every row drawn again
        await pilot.pause(0.2)
        for widget in (bar, pane, *containers):
            painted = _painted(widget)
            assert painted == _fresh(widget) and _one_object_a_kind(painted)
        assert _painted(bar)[0] is track
        before = _painted(bar)
        sb.scroll_home(animate=False, immediate=True)  # the thumb moves
        await idle(pilot)
        moved = _painted(bar)
        assert moved == _fresh(bar) and moved != before
        pilot.app.theme = "textual-light"
        await pilot.pause(0.1)
        for widget in (bar, pane, *containers):
            painted = _painted(widget)
            assert painted == _fresh(widget) and _one_object_a_kind(painted)
        assert _painted(bar)[0] != track
