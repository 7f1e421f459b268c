"""The scrollbar stands for the whole history (issue 14, item 5): on a 10,000-message log
its thumb is at the top, the middle and the bottom as the view is; it is as small as the
share of the history in view; a click at the middle of the bar jumps near the middle, a
drag of the thumb jumps as it goes, and new messages grow the history."""

from __future__ import annotations

from ikigai_tui.core.events import WriteBatch
from ikigai_tui.tui.widgets.history_bar import HistoryBar, geometry

from .conftest import SIZE, idle, root_id, settle

N = 10_000


async def ten_thousand(bench) -> None:
    async with bench.prep() as session:
        root = root_id(session)
        batch = WriteBatch()
        for i in range(N):
            kind = "user" if i % 2 == 0 else "assistant"
            batch.add(root, kind, {"content": f"message number {i}\n\nand a second line"})
        await session.commit(batch)


async def ready(pilot):
    """The scrollback once its history is read and every slice of its page is drawn."""
    await settle(pilot)
    sb = pilot.app.panes.active.scrollback
    for _ in range(200):
        if sb.history is not None and not sb._undrawn:
            break
        await pilot.pause(0.02)
    await idle(pilot)
    assert sb.history is not None and len(sb.history) == N
    return sb


def thumb(sb) -> tuple[float, float, float]:
    """(top, height, bar height) of the thumb, in cells."""
    bar = sb.vertical_scrollbar
    assert isinstance(bar, HistoryBar) and bar.display
    size, top, height, _room = bar._thumb()
    return top, height, size


def bar_cells(sb) -> list[bool]:
    """Which cells of the bar, as drawn, are the thumb (drawn reversed or with a glyph)."""
    bar = sb.vertical_scrollbar
    rendered = bar.render()
    cells = []
    for segment in rendered.segments:
        if segment.text == "\n":
            continue
        cells.append(bool(segment.style and (segment.style.reverse or segment.text.strip())))
    return cells


def first_shown(sb) -> int:
    """The number of the message at the top of the view."""
    import bisect

    index = max(0, bisect.bisect_right(sb._starts, int(sb.scroll_y)) - 1)
    text = sb.items[index].text
    return int(text.split()[2])


async def click_bar(pilot, sb, y: int) -> None:
    bar = sb.vertical_scrollbar
    await pilot.click(bar, offset=(0, y))
    for _ in range(100):
        await pilot.pause(0.02)
        if not sb._undrawn and not [w for w in pilot.app.workers if not w.is_finished]:
            break
    await idle(pilot)


async def test_the_thumb_stands_for_the_whole_history(bench):
    await ten_thousand(bench)
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        sb = await ready(pilot)
        total, first, shown = geometry(sb)
        assert total == N and shown < 40
        top, height, size = thumb(sb)
        assert height == 1  # a screen of 10,000 messages: the smallest thumb
        assert top == size - height  # at the end
        cells = bar_cells(sb)
        assert len(cells) == size and cells[-1] and not any(cells[: int(size) // 2])

        await app.action_scroll("home")
        await idle(pilot)
        top, height, size = thumb(sb)
        assert top == 0 and bar_cells(sb)[0] and not any(bar_cells(sb)[int(size) // 2:])

        assert await sb.jump_to(sb.history.key_at(N // 2))
        await idle(pilot)
        top, height, size = thumb(sb)
        assert abs(top - (size - height) / 2) <= 1  # the middle
        assert abs(first_shown(sb) - N // 2) <= 1


async def test_a_click_at_the_middle_of_the_bar_jumps_near_the_middle(bench):
    await ten_thousand(bench)
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        sb = await ready(pilot)
        _top, _height, size = thumb(sb)
        await click_bar(pilot, sb, int(size) // 2)
        shown = first_shown(sb)
        assert abs(shown - N // 2) <= N * 0.05, shown  # within 5% of the history
        assert not sb.following and not sb.at_end and not sb.at_start
        top, height, size = thumb(sb)
        assert abs(top + height / 2 - size / 2) <= 1.5  # the thumb where it was clicked

        await click_bar(pilot, sb, 0)  # the top of the bar: the start
        assert first_shown(sb) == 0 and sb.at_start
        await click_bar(pilot, sb, int(size) - 1)  # the bottom: the end, followed
        assert sb.at_end and sb.following and first_shown(sb) > N - 40


async def test_dragging_the_thumb_jumps_as_it_goes(bench):
    await ten_thousand(bench)
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        sb = await ready(pilot)
        bar = sb.vertical_scrollbar
        top, _height, size = thumb(sb)
        await pilot.mouse_down(bar, offset=(0, int(top)))  # grab the thumb at the end
        await pilot.hover(bar, offset=(0, int(size) // 4))
        await pilot.mouse_up(bar, offset=(0, int(size) // 4))
        for _ in range(100):
            await pilot.pause(0.02)
            if not sb._undrawn and not [w for w in app.workers if not w.is_finished]:
                break
        await idle(pilot)
        assert abs(first_shown(sb) - N // 4) <= N * 0.05, first_shown(sb)


async def test_new_messages_grow_the_history(bench):
    await ten_thousand(bench)
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        sb = await ready(pilot)
        batch = WriteBatch()
        batch.add(app.focused_agent, "user", {"content": "message number 10000"})
        await app.session.commit(batch)
        await idle(pilot)
        assert len(sb.history) == N + 1
        assert geometry(sb)[0] == N + 1 and thumb(sb)[0] == thumb(sb)[2] - 1
