"""The Scrollback widget on its own: paging from an in-memory log, view-first drawing,
keeping the view in place, the bounded range, streaming, the window rule and following.

The log is a list of alternating user/assistant items (keys 1..N, some Markdown, several
lines each) read through a `pages` function that behaves like the SQL page and records
every call, so tests can say exactly which pages were read.
"""

from __future__ import annotations

from textual.app import App, ComposeResult

from ikigai_tui.tui.transcript import Item
from ikigai_tui.tui.widgets import scrollback as scrollback_module
from ikigai_tui.tui.widgets.scrollback import PAGE_ITEMS, Scrollback

SIZE = (120, 40)
RULE = "window starts here"


def make_items(n: int, *, tall: int = 1) -> list[Item]:
    """User items of one line; assistant items of 2 + `tall` paragraphs (Markdown)."""
    items = []
    for key in range(1, n + 1):
        if key % 2:
            items.append(Item(key, "user", f"question {key}"))
        else:
            more = "".join(f"\n\nmore {key}.{j}" for j in range(tall))
            items.append(Item(key, "assistant", f"**answer {key}**\n\nline a {key}{more}"))
    return items


class Log:
    """An in-memory log read a page at a time, like `Store` pages from SQLite."""

    def __init__(self, items: list[Item]) -> None:
        self.items = items
        self.calls: list[dict] = []

    async def pages(self, *, before=None, after=None, oldest=False, limit=60) -> list[Item]:
        self.calls.append({"before": before, "after": after, "oldest": oldest, "limit": limit})
        if oldest:
            return self.items[:limit]
        if after is not None:
            return [i for i in self.items if i.key > after][:limit]
        chosen = [i for i in self.items if before is None or i.key < before]
        return chosen[-limit:]  # the newest `limit` of them, oldest first


class Host(App):
    def __init__(self, scrollback: Scrollback) -> None:
        super().__init__()
        self.scrollback = scrollback

    def compose(self) -> ComposeResult:
        yield self.scrollback


async def start(n: int, *, tall: int = 1) -> tuple[Host, Scrollback, Log]:
    """A host app whose scrollback has the newest page preloaded (as the app does)."""
    log = Log(make_items(n, tall=tall))
    sb = Scrollback("agent", log.pages)
    sb.preload(await sb.latest_page())
    return Host(sb), sb, log


async def settle(pilot) -> None:
    """Let refreshes, call_after_refresh callbacks (the slices of a page drawn after the
    frame) and page workers run out."""
    for _ in range(3):
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()
    for _ in range(200):
        if not any(sb._undrawn for sb in pilot.app.query(Scrollback)):
            break
        await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def scroll(pilot, sb: Scrollback, y: float) -> list[str]:
    """Scroll as the user would (no animation), then let any page load finish.
    Returns what was on screen right after the scroll, before any page was read."""
    sb.scroll_to(y=y, animate=False, immediate=True)
    shown = screen(sb)
    await settle(pilot)
    return shown


def screen(sb: Scrollback) -> list[str]:
    return [sb.render_line(y).text.rstrip() for y in range(sb.size.height)]


def lines(sb: Scrollback) -> list[str]:
    return [strip.text.rstrip() for strip in sb._lines]


def keys(sb: Scrollback) -> list[int]:
    return [item.key for item in sb.items]


def at_bottom(sb: Scrollback) -> bool:
    return sb.max_scroll_y > 0 and sb.scroll_y == sb.max_scroll_y


# ---- start-up ---------------------------------------------------------------------------


async def test_preloaded_page_shows_the_end_reads_one_page_and_mounts_no_widget_per_item():
    app, sb, log = await start(1000)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert sb.loaded and at_bottom(sb) and sb.following
        assert log.calls == [{"before": None, "after": None, "oldest": False, "limit": PAGE_ITEMS}]
        assert keys(sb) == list(range(1000 - PAGE_ITEMS + 1, 1001))
        assert all(sb._strips) and len(sb._lines) == sum(map(len, sb._strips))
        assert "line a 1000" in screen(sb)
        widgets = len(app.query("*"))
        sb.add_items(make_items(1100)[1000:])  # 100 more items
        await settle(pilot)
        assert keys(sb)[-1] == 1100 and at_bottom(sb)
        assert len(app.query("*")) == widgets  # lines, never a widget per message


def spy_render_rest(monkeypatch) -> list[dict]:
    """Record the state each time a slice of the undrawn items is about to be drawn
    (`_draw_slices`: a frame has been painted)."""
    seen: list[dict] = []
    render_rest = Scrollback._draw_slices

    def spy(self: Scrollback) -> None:
        seen.append({"drawn": [bool(s) for s in self._strips], "undrawn": self._undrawn,
                     "bottom": at_bottom(self), "screen": screen(self)})
        render_rest(self)

    monkeypatch.setattr(Scrollback, "_draw_slices", spy)
    return seen


async def test_first_layout_draws_the_newest_items_first_and_the_rest_after_the_frame(monkeypatch):
    seen = spy_render_rest(monkeypatch)
    app, sb, log = await start(1000, tall=8)  # ~20 lines per answer: 2 screens = a few items
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert seen and seen[0]["undrawn"], "_draw_slices did not run after a partial draw"
        drawn = seen[0]["drawn"]
        assert drawn[-1] and not drawn[0]
        assert drawn == sorted(drawn)  # a newest run is drawn, every older one is not
        newest = drawn.index(True)
        # The view's height (and a margin of 2 lines), not more: the rest after the frame.
        assert sum(len(s) for s in sb._strips[newest:]) >= sb.size.height + 2
        assert sum(len(s) for s in sb._strips[newest + 1:]) < sb.size.height + 2
        assert not sb._undrawn and all(sb._strips)
        assert at_bottom(sb) and sb.following and "more 1000.7" in screen(sb)
        assert len(log.calls) == 1

        # Undrawn again (as after a resize): scrolling meanwhile fetches no page, and once
        # the older items are drawn above, the same text stays in view.
        sb._render_all()
        assert sb._undrawn and not all(sb._strips)
        shown = await scroll(pilot, sb, 0)
        assert len(log.calls) == 1
        assert all(sb._strips) and not sb._undrawn
        assert sb.scroll_y > 0 and not sb.following and screen(sb) == shown


async def test_the_first_frame_already_shows_the_end(monkeypatch):
    seen = spy_render_rest(monkeypatch)
    app, sb, log = await start(1000, tall=8)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert seen and seen[0]["bottom"] and "more 1000.7" in seen[0]["screen"]


# ---- paging -----------------------------------------------------------------------------


async def test_scrolling_up_reads_older_pages_in_place_until_the_start():
    app, sb, log = await start(190)  # pages: 151-190, 111-150, 71-110, 31-70, 1-30
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert not sb.at_start
        y = 2 * sb.size.height - 10  # within two screens of the top of the range
        shown = await scroll(pilot, sb, y)
        assert log.calls[-1]["before"] == 151
        assert keys(sb)[0] == 111 and sb.scroll_y > y
        assert screen(sb) == shown  # the same text at the same rows: no jump
        for _ in range(10):
            if sb.at_start:
                break
            shown = await scroll(pilot, sb, 0)
            assert screen(sb) == shown
        assert [c["before"] for c in log.calls[1:]] == [151, 111, 71, 31]
        assert sb.at_start and keys(sb) == list(range(1, 191))
        await scroll(pilot, sb, 0)
        assert len(log.calls) == 5  # nothing older to read
        assert screen(sb)[0] == "› question 1"


async def test_home_shows_the_first_item_and_end_returns_to_the_newest():
    app, sb, log = await start(1000)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await sb.action_scroll_home()
        await settle(pilot)
        assert log.calls[1] == {"before": None, "after": None, "oldest": True, "limit": PAGE_ITEMS}
        assert screen(sb)[0] == "› question 1"
        assert sb.scroll_y == 0 and sb.at_start and not sb.at_end and not sb.following
        assert keys(sb)[0] == 1
        await sb.action_scroll_end()
        await settle(pilot)
        assert sb.following and sb.at_end and at_bottom(sb)
        assert keys(sb)[-1] == 1000 and "line a 1000" in screen(sb)


async def test_the_loaded_range_stays_bounded_and_pages_back_down(monkeypatch):
    monkeypatch.setattr(scrollback_module, "MAX_LINES", 300)  # a page is ~180 lines
    app, sb, log = await start(1000)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for _ in range(8):
            await scroll(pilot, sb, 0)
            assert 0 < len(sb._lines) <= 300
            assert keys(sb) == list(range(keys(sb)[0], keys(sb)[-1] + 1))  # contiguous
        assert len([c for c in log.calls if c["before"]]) == 8
        assert keys(sb)[0] == 1000 - 9 * PAGE_ITEMS + 1 and not sb.at_end
        last = keys(sb)[-1]
        await scroll(pilot, sb, sb.max_scroll_y)
        assert log.calls[-1]["after"] == last and keys(sb)[-1] > last
        assert len(sb._lines) <= 300


async def test_paging_up_at_the_line_limit_keeps_the_view_in_place(monkeypatch):
    monkeypatch.setattr(scrollback_module, "MAX_LINES", 300)
    app, sb, log = await start(1000)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for _ in range(4):
            shown = await scroll(pilot, sb, 10)
            assert screen(sb) == shown


async def test_home_keeps_the_first_item_when_the_oldest_page_is_over_the_line_limit(
        monkeypatch):
    monkeypatch.setattr(scrollback_module, "MAX_LINES", 150)  # a page is ~180; a screen 40
    app, sb, log = await start(1000)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await sb.action_scroll_home()
        await settle(pilot)
        assert keys(sb)[0] == 1 and sb.at_start and len(sb._lines) <= 150
        assert screen(sb)[0] == "› question 1"


async def test_a_rule_moved_while_scrolled_up_does_not_move_the_view():
    app, sb, log = await start(1000)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        shown = await scroll(pilot, sb, sb.max_scroll_y // 2)
        assert not sb.following
        sb.set_rule(keys(sb)[1], RULE)  # a line added above the view
        await settle(pilot)
        assert screen(sb) == shown


# ---- streaming, the rule, following -----------------------------------------------------


async def test_a_stream_appends_lines_while_following_and_end_stream_removes_them():
    app, sb, log = await start(39)  # one page, the whole log
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        before = lines(sb)
        sb.stream("Hello wor")
        sb.stream("ld\n\nsecond ")  # (Markdown: two paragraphs)
        sb.stream("line")
        await settle(pilot)
        assert lines(sb) == before + ["Hello world", "", "second line"]
        assert at_bottom(sb) and screen(sb)[-3:] == ["Hello world", "", "second line"]
        sb.end_stream()
        await settle(pilot)
        assert lines(sb) == before and at_bottom(sb)

        await scroll(pilot, sb, sb.max_scroll_y - 20)
        y, shown = sb.scroll_y, screen(sb)
        assert not sb.following
        sb.stream("one\n\ntwo\n\nthree\n")
        await settle(pilot)
        assert lines(sb)[-5:] == ["one", "", "two", "", "three"]
        assert sb.scroll_y == y and screen(sb) == shown


async def test_the_rule_is_one_line_before_its_item_and_moves_with_it():
    app, sb, log = await start(39)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        count = len(sb._lines)

        def rule_rows() -> list[int]:
            return [n for n, text in enumerate(lines(sb)) if RULE in text]

        # The rule line, then the blank gap every item has, then the item.
        sb.set_rule(31, RULE)
        assert len(sb._lines) == count + 2
        (row,) = rule_rows()
        assert "─" in lines(sb)[row] and lines(sb)[row + 1:row + 3] == ["", "› question 31"]
        sb.set_rule(20, RULE)
        assert len(sb._lines) == count + 2
        (moved,) = rule_rows()
        assert moved < row and lines(sb)[moved + 1:moved + 3] == ["", "answer 20"]
        assert RULE not in lines(sb)[row] and lines(sb)[row + 2] == "› question 31"
        sb.set_rule(None, "")
        assert len(sb._lines) == count and rule_rows() == []


async def test_scrolling_up_stops_following_and_the_end_resumes_it():
    app, sb, log = await start(39)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await scroll(pilot, sb, sb.max_scroll_y - 10)
        assert not sb.following
        y, shown = sb.scroll_y, screen(sb)
        sb.add_items([Item(40, "assistant", "**answer 40**\n\nline a 40")])
        await settle(pilot)
        assert "line a 40" in lines(sb) and "line a 40" not in screen(sb)
        assert sb.scroll_y == y and screen(sb) == shown
        await scroll(pilot, sb, sb.max_scroll_y)
        assert sb.following
        sb.add_items([Item(41, "user", "question 41")])
        await settle(pilot)
        assert at_bottom(sb) and "› question 41" in screen(sb)


async def test_a_resize_while_scrolled_up_keeps_the_item_at_the_top():
    words = " ".join(f"word{n}" for n in range(40))  # wraps differently at each width
    log = Log([Item(key, "user", f"message {key}: {words}") for key in range(1, 201)])
    sb = Scrollback("agent", log.pages)
    sb.preload(await sb.latest_page())
    app = Host(sb)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await scroll(pilot, sb, sb.max_scroll_y // 2)
        index = max(i for i, start in enumerate(sb._starts) if start <= sb.scroll_y)
        sb.scroll_to(y=sb._starts[index], animate=False, immediate=True)  # an item's first line
        await settle(pilot)
        top = screen(sb)[0]
        assert top.startswith("› message ")
        await pilot.resize_terminal(70, 40)
        await settle(pilot)
        assert not sb.following and sb._width < 70
        assert screen(sb)[0].split(":")[0] == top.split(":")[0]  # re-wrapped, same item on top
