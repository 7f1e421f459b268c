"""The preview of matches (/forget CRITERIA, /remember CRITERIA): grouped by exchange,
reasons, the criteria and the matcher shown, and thousands of items in one line-based
list (one message in full: test_match_preview_view.py)."""

from __future__ import annotations

import pytest

from ikigai_tui.tui.safe_text import C1_PLACEHOLDER
from ikigai_tui.tui.screens.preview import PreviewItem, PreviewList, PreviewScreen

from .harness import Harness
from .match_preview_parts import BEFORE, MATCHES, SIZE, lines, matches, opened, text_of


# ---- layout ----


async def test_items_are_grouped_by_exchange_with_their_reasons():
    app = Harness(matches())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        shown = lines(app.screen)
        # Each header's box shows its exchange's ticks: all of #40 and #55, none of #90.
        assert [line for line in shown if "exchange" in line] == [
            "▐X▌ exchange #40 · 2 messages · 451 tokens",
            "▐X▌ exchange #55 · 2 messages · 48 tokens",
            "▐ ▌ exchange #90 · 1 message · 12 tokens",
        ]
        # header, row, reason, row, reason | header, row, reason, row | header, row, reason
        assert len(shown) == 12
        assert shown[1].split()[1:5] == ["#40", "user", "31", "Can"]
        assert shown[2].strip() == "↳ asks for the schema"
        assert shown[4].strip() == "↳ proposes the tables"
        assert shown[8].split()[1:4] == ["#58", "tool_result", "3"]  # no reason line after it
        assert shown[9].startswith("▐ ▌ exchange #90")
        # The box is drawn either way, ticked and unticked differ by glyph (not only colour).
        assert "▐X▌" in shown[1] and "▐ ▌" in shown[10]


async def test_title_matcher_and_subtitle():
    app = Harness(matches())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        dialog = app.screen.query_one(".dialog")
        assert str(dialog.border_title) == 'Forget: review the messages · "database schema"'
        assert str(dialog.border_subtitle) == "5 messages in 3 exchanges"
        assert text_of(app.screen, "#preview-matcher") == "matched by: local (words + meaning)"


async def test_the_matcher_line_says_how_sure_when_some_are_only_possible():
    """Issue 29: the local matcher's possible matches come unticked, their reason saying
    so; the preview counts them beside the likely ones."""
    possible = [PreviewItem(70, "user", "Do we need an index?", 9,
                            reason="possible: meaning 0.31", exchange=70, checked=False),
                PreviewItem(71, "assistant", "Maybe later.", 4,
                            reason="possible: meaning 0.31", exchange=70, checked=False)]
    app = Harness(PreviewScreen("Forget: review the messages", MATCHES + possible, BEFORE,
                                matcher="local (words + meaning)", criteria="database schema"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert text_of(app.screen, "#preview-matcher") == (
            "matched by: local (words + meaning) · 4 likely, 2 possible (unticked)")
        shown = lines(app.screen)
        row = next(line for line in shown if "#70" in line and "user" in line)
        assert "▐ ▌" in row  # listed, not ticked


async def test_without_exchanges_there_are_no_headers_and_no_matcher_line():
    items = [PreviewItem(i, "user", f"line {i}", 10) for i in (3, 1, 2)]
    app = Harness(PreviewScreen("Forget", items, 100))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert [line.split()[1] for line in lines(app.screen)] == ["#3", "#1", "#2"]
        assert not app.screen.query("#preview-matcher")
        assert str(app.screen.query_one(".dialog").border_subtitle) == "3 messages"


@pytest.mark.parametrize("width", [80, 120])
async def test_reasons_stay_readable_on_their_own_line(width):
    long_reason = "talks about the orders table, its indexes and the migration that adds shipped_at"
    items = [PreviewItem(7, "assistant", "x " * 200, 99, reason=long_reason, exchange=6)]
    app = Harness(PreviewScreen("Forget", items, 1000))
    async with app.run_test(size=(width, 30)) as pilot:
        await pilot.pause()
        row, reason = lines(app.screen)[1:3]
        assert row.endswith("…")  # the first line is cut to fit
        list_width = app.screen.preview_list.scrollable_content_region.width
        room = list_width - len("      ↳ ")
        assert room >= 60  # even at 80 columns most of a reason fits
        expected = long_reason if len(long_reason) <= room else long_reason[:room - 1] + "…"
        assert reason.strip() == "↳ " + expected


async def test_untrusted_reason_and_criteria_are_inert():
    items = [PreviewItem(1, "user", "hi", 5, reason="evil\x1b[2J\nsecond \x9b line", exchange=1)]
    screen = PreviewScreen("Forget", items, 10, criteria="schema\x07", matcher="m\x1b]0;t\x07")
    app = Harness(screen)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        reason = lines(screen)[2]
        assert reason.strip() == f"↳ evil\u241b[2J second {C1_PLACEHOLDER} line"
        assert "\x1b" not in str(screen.query_one(".dialog").border_title)
        assert "\u2407" in str(screen.query_one(".dialog").border_title)
        assert "\x1b" not in text_of(screen, "#preview-matcher")


# ---- keys over groups ----


def row(items: PreviewList) -> int | str:
    """The row under the cursor: an item's id, or "x" and the exchange of a header."""
    if items.current is not None:
        return items.current.id
    return "x" + items.line_map.headers[items.cursor_group].split()[1].lstrip("#")


async def test_the_cursor_walks_items_and_the_exchanges_headers():
    app = Harness(matches())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        items = app.screen.preview_list
        seen = [row(items)]  # it opens on the first message, under its header
        for _ in range(7):  # one more than there are rows below: stays on the last
            await pilot.press("down")
            seen.append(row(items))
        assert seen == [40, 41, "x55", 57, 58, "x90", 90, 90]
        await pilot.press("up", "up")
        assert row(items) == 58
        await pilot.press("home")
        assert row(items) == "x40"
        await pilot.press("end")
        assert row(items) == 90
        await pilot.press("pageup")
        assert row(items) == "x40"
        await pilot.press("pagedown")
        assert row(items) == 90


async def test_space_a_and_n_with_groups_return_the_right_ids():
    app = Harness(matches())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        await pilot.press("down", "down", "down", "space")  # #57, past #55's header
        await pilot.press("down", "down", "down", "space")  # #90 ticked, past its header
        await pilot.pause()
        assert screen.checked_ids == [40, 41, 58, 90]
        assert text_of(screen, "#preview-totals").startswith("4 of 5 selected · removes 466 tokens")
        await pilot.press("n")
        await pilot.pause()
        assert screen.checked_ids == []
        await pilot.press("a")
        await pilot.pause()
        assert screen.checked_ids == [40, 41, 57, 58, 90]
        await pilot.press("up", "up", "space", "ctrl+s")  # untick #58, past #90's header
        await pilot.pause()
        assert app.results == [[40, 41, 57, 90]]


async def test_clicking_a_row_toggles_it_and_a_header_its_exchange():
    async with opened(matches()) as (app, pilot):
        screen = app.screen
        items = screen.preview_list
        assert await pilot.click(PreviewList, offset=(10, 0))  # the first header
        await pilot.pause()
        assert row(items) == "x40"
        assert screen.checked_ids == [57, 58]  # #40 and #41 unticked together
        assert await pilot.click(PreviewList, offset=(10, 3))  # #41's row
        await pilot.pause()
        assert items.current.id == 41
        assert screen.checked_ids == [41, 57, 58]


# ---- ticking by exchange ----


async def test_space_on_a_header_ticks_the_whole_exchange():
    async with opened(matches()) as (app, pilot):
        screen = app.screen
        items = screen.preview_list
        await pilot.press("up", "space")  # on #40's header: all of it was ticked, none is now
        await pilot.pause()
        assert row(items) == "x40"
        assert screen.checked_ids == [57, 58]
        assert lines(screen)[0].startswith("▐ ▌ exchange #40")
        await pilot.press("space")
        await pilot.pause()
        assert screen.checked_ids == [40, 41, 57, 58]
        assert lines(screen)[0].startswith("▐X▌ exchange #40")
        # No exchange split: the totals' second line says how to tick one whole.
        assert text_of(screen, "#preview-totals").splitlines()[1] == (
            "Space on an exchange's header ticks (or unticks) all of it.")


async def test_a_message_ticked_alone_splits_its_exchange_and_the_totals_say_so():
    async with opened(matches()) as (app, pilot):
        screen = app.screen
        items = screen.preview_list
        await pilot.press("down", "space")  # #41, the answer, stays; its question #40 goes
        await pilot.pause()
        assert screen.checked_ids == [40, 57, 58]
        assert lines(screen)[0].startswith("▐-▌ exchange #40")  # partly ticked
        totals = text_of(screen, "#preview-totals").splitlines()
        assert totals[0].startswith("3 of 5 selected · removes 79 tokens")
        assert totals[1] == "⚠ 1 exchange split: part goes, part stays"
        await pilot.press("down", "down", "space")  # #57 too: a second exchange split
        await pilot.pause()
        assert "⚠ 2 exchanges split" in text_of(screen, "#preview-totals")
        await pilot.press("home", "space")  # #40's header: the whole exchange goes again
        await pilot.pause()
        assert row(items) == "x40"
        assert "⚠ 1 exchange split" in text_of(screen, "#preview-totals")
        await pilot.press("a")
        await pilot.pause()
        assert "split" not in text_of(screen, "#preview-totals")
        await pilot.press("end", "space", "enter")  # #90 unticked: what is applied is what shows
        await pilot.pause()
        assert app.results == [[40, 41, 57, 58]]


@pytest.mark.parametrize(("mode", "says"), [
    ("keep", "part stays, part goes"), ("restore", "part comes back, part stays out")])
async def test_the_split_warning_says_what_each_part_does(mode, says):
    async with opened(matches(mode=mode)) as (app, pilot):
        await pilot.press("space")  # #40 alone
        await pilot.pause()
        assert f"⚠ 1 exchange split: {says}" in text_of(app.screen, "#preview-totals")


# ---- /remember: what leaves ----


async def test_keep_mode_counts_what_leaves_including_the_unlisted():
    """/remember lists the matches; the rest of the context (not listed) leaves too."""
    app = Harness(matches(mode="keep", unlisted=(120, 9_000)))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        assert text_of(screen, "#preview-totals").splitlines()[0] == (
            "4 of 5 selected to stay · 121 messages (9,012 tokens) leave"
            " · context: 20,000 → 10,988 tokens")
        await pilot.press("space")  # #40 leaves too
        await pilot.pause()
        assert text_of(screen, "#preview-totals").startswith(
            "3 of 5 selected to stay · 122 messages (9,043 tokens) leave")
        await pilot.press("a", "enter")  # everything listed stays; the unlisted still leave
        await pilot.pause()
        assert app.results == [[40, 41, 57, 58, 90]]


# ---- thousands of matches ----


async def test_thousands_of_matches_are_one_widget_and_keys_stay_exact():
    items = [PreviewItem(i, "assistant" if i % 3 else "user", f"message {i}", 10,
                         reason=f"reason {i}", exchange=i - i % 3) for i in range(1, 5001)]
    screen = PreviewScreen("Forget", items, 100_000)
    app = Harness(screen)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert len(list(screen.walk_children())) < 40  # no widget per match
        lst = screen.preview_list
        assert lst.line_count == 5000 * 2 + len({i - i % 3 for i in range(1, 5001)})
        await pilot.press("end", "space")
        await pilot.pause()
        assert lst.current.id == 5000 and 5000 not in screen.checked_ids
        assert lst.scroll_y == lst.max_scroll_y  # the last item is in view
        await pilot.press("pageup", "pageup")
        assert lst.current.id < 5000
        top = int(lst.scroll_y)
        assert top <= lst.line_map.item_line[lst.cursor] < top + lst.scrollable_content_region.height
        await pilot.press("n", "space")
        await pilot.pause()
        assert screen.checked_ids == [lst.current.id]
        assert text_of(screen, "#preview-totals").startswith("1 of 5,000 selected · removes 10 tokens")


async def test_an_empty_preview_opens_and_cancels():
    app = Harness(PreviewScreen("Forget", [], 100, matcher="local (words + meaning)"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        assert screen.preview_list.current is None and screen.preview_list.line_count == 0
        await pilot.press("down", "space", "v", "enter")
        await pilot.pause()
        assert app.screen is screen and app.results == []  # nothing to view, nothing to apply
        await pilot.press("escape")
        await pilot.pause()
        assert app.results == [None]


async def test_a_preview_losing_its_widgets_before_its_fitting_runs_does_not_crash():
    """Applied or cancelled within a frame of opening (a fast Ctrl+S; a second preview
    queued behind the first): while it is dismissed, the screen is still mounted but its
    widgets are gone, and a fitting put off to after a refresh (or a resize) that runs
    then must leave them be rather than stop the app (a full run caught NoMatches)."""
    async with opened(matches()) as (app, pilot):
        screen = app.screen
        await screen.query_one("#preview-area").remove()  # as a dismissal does, first
        assert screen.is_mounted
        screen._fit_list()
        screen.on_resize()
        await pilot.pause()
        await pilot.pause()
        assert app.screen is screen and app.results == []
