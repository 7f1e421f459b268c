"""Jumps draw what is on screen first (issue 14, item 3): Ctrl+Home, Ctrl+End and a jump
to an id read a page but draw, before the frame, only the items the view shows; the rest
of the page is drawn after it, in slices, keeping the view in place."""

from __future__ import annotations

from ikigai_tui.tui.widgets.scrollback import PAGE_ITEMS, Scrollback
from tests.tui.test_scrollback import SIZE, at_bottom, keys, screen, settle, start


def drawn_lines(sb: Scrollback) -> int:
    return sum(len(s) for s in sb._strips)


def drawn_items(sb: Scrollback) -> int:
    return sum(1 for s in sb._strips if s)


async def test_home_draws_the_first_screen_then_the_rest_of_the_page():
    app, sb, log = await start(1000, tall=8)  # ~20 lines an answer: a screen is a few items
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await sb.action_scroll_home()
        assert screen(sb)[0] == "› question 1"
        assert sb._undrawn and 0 < drawn_items(sb) < PAGE_ITEMS // 2
        assert sb._strips[0] and not sb._strips[-1]
        assert drawn_lines(sb) >= sb.size.height  # the view is full
        await settle(pilot)
        assert not sb._undrawn and all(sb._strips) and len(sb.items) == PAGE_ITEMS
        assert sb.scroll_y == 0 and screen(sb)[0] == "› question 1" and sb.at_start


async def test_end_draws_the_last_screen_then_the_rest_above_it():
    app, sb, log = await start(1000, tall=8)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await sb.action_scroll_home()
        await settle(pilot)
        await sb.action_scroll_end()
        assert sb._undrawn and sb._strips[-1] and not sb._strips[0]
        assert drawn_items(sb) < PAGE_ITEMS // 2
        await pilot.pause()
        assert "more 1000.7" in screen(sb)  # the first frame shows the end
        await settle(pilot)
        assert all(sb._strips) and keys(sb)[-1] == 1000 and at_bottom(sb) and sb.following
        assert "more 1000.7" in screen(sb)


async def test_a_jump_to_an_id_shows_it_at_the_top_and_keeps_it_there():
    app, sb, log = await start(1000, tall=8)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert await sb.jump_to(501)
        assert screen(sb)[0] == "› question 501"
        assert sb._undrawn and drawn_items(sb) < PAGE_ITEMS // 2
        await settle(pilot)
        assert all(sb._strips) and not sb.following
        assert 501 in keys(sb) and keys(sb)[0] < 501 < keys(sb)[-1]  # read around it
        assert screen(sb)[0] == "› question 501"  # older items drawn above: still in place
        assert not sb.at_start and not sb.at_end
        assert await sb.jump_to(5000) is False  # no such item: nothing moves
        assert screen(sb)[0] == "› question 501"


async def test_scrolling_up_after_a_jump_reads_older_pages():
    app, sb, log = await start(1000)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await sb.jump_to(501)
        await settle(pilot)
        first = keys(sb)[0]
        sb.scroll_to(y=0, animate=False, immediate=True)
        await settle(pilot)
        assert keys(sb)[0] < first


async def test_a_page_read_near_an_edge_is_drawn_after_the_frame_in_place():
    app, sb, log = await start(1000, tall=8)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        first = keys(sb)[0]
        sb.scroll_to(y=0, animate=False, immediate=True)
        shown = screen(sb)
        await app.workers.wait_for_complete()  # the older page is read
        assert keys(sb)[0] < first
        assert not all(sb._strips) and not sb._strips[0]  # the farthest is drawn last
        assert screen(sb) == shown
        await settle(pilot)
        assert all(sb._strips) and screen(sb) == shown
