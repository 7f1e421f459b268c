"""The history bar (widgets/history_bar.py) repaints only when what it draws changes:
a reply streaming at the end of a long history leaves its thumb where it is (Textual
asked for three or four repaints of it a line), and a jump still moves it on screen."""

from __future__ import annotations

import contextlib

from textual.geometry import Region

from .conftest import SIZE, idle
from .test_history_bar import ready, ten_thousand


def _painted_thumb(bar) -> list[int]:
    """The rows of the bar as painted (its cached lines, as the screen shows them) that
    are the thumb (reversed or a glyph)."""
    strips = bar.render_lines(Region(0, 0, bar.size.width, bar.size.height))
    return [y for y, strip in enumerate(strips)
            if any(seg.style and (seg.style.reverse or seg.text.strip()) for seg in strip)]


@contextlib.asynccontextmanager
async def _long_history(bench):
    """(pilot, scrollback, its bar): the app on 10,000 messages, shown at their end."""
    await ten_thousand(bench)
    async with bench.app().run_test(size=SIZE) as pilot:
        sb = await ready(pilot)
        yield pilot, sb, sb.vertical_scrollbar


async def test_a_reply_streaming_at_the_end_does_not_repaint_the_bar(bench):
    async with _long_history(bench) as (pilot, sb, bar):
        drawn: list[int] = []
        render = bar.render
        bar.render = lambda: (drawn.append(1), render())[1]
        lines = len(sb._lines)
        for n in range(12):
            sb.stream(f"line {n} of a reply that streams\n\n")
            await pilot.pause()
        sb._flush_stream()  # the last block, drawn now
        await idle(pilot)
        assert len(sb._lines) > lines + 10 and sb.following  # lines came, the view followed
        assert drawn == []
        assert _painted_thumb(bar) == [bar.size.height - 1]  # still at the bottom


async def test_a_jump_still_moves_the_painted_thumb(bench):
    async with _long_history(bench) as (pilot, _sb, bar):
        assert _painted_thumb(bar) == [bar.size.height - 1]
        await pilot.press("ctrl+home")
        await idle(pilot)
        assert _painted_thumb(bar) == [0]
        await pilot.press("ctrl+end")
        await idle(pilot)
        assert _painted_thumb(bar) == [bar.size.height - 1]
