"""The preview of matches: V shows one message in full (loaded from the log, inert, cut
when huge, an error said), and Esc comes back to the same place in the list."""

from __future__ import annotations

from ikigai_tui.tui.screens.message_view import SHOWN_MAX, MessageScreen
from ikigai_tui.tui.screens.preview import PreviewScreen

from .harness import Harness
from .match_preview_parts import FULL_TEXT, SIZE, load_text, matches, text_of


async def test_v_shows_the_whole_message_and_esc_returns_to_the_same_place():
    app = Harness(matches(load_text=load_text))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        preview = app.screen
        await pilot.press("down", "v")
        await pilot.pause()
        view = app.screen
        assert isinstance(view, MessageScreen)
        await pilot.pause()
        assert view.loaded
        assert view.text == FULL_TEXT[41].replace("\x1b", "\u241b")  # whole, and inert
        assert "#41 · assistant · 420 tokens" in str(view.query_one(".dialog").border_title)
        assert text_of(view, "#message-reason") == "matched: proposes the tables"
        await pilot.press("pagedown", "space", "a")  # keys for the view do nothing to the list
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is preview
        assert preview.preview_list.current.id == 41
        assert preview.preview_list.has_focus
        assert preview.checked_ids == [40, 41, 57, 58]
        assert app.results == []


async def test_v_without_load_text_shows_the_items_own_text():
    app = Harness(matches())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("down", "v")
        await pilot.pause()
        assert isinstance(app.screen, MessageScreen)
        assert app.screen.text == "Here is a first schema:\nCREATE TABLE orders (...)"


async def _view(pilot) -> None:
    """V on the first match, and its text loaded (a worker, then the screen's update)."""
    await pilot.pause()
    await pilot.press("v")
    await pilot.pause()
    await pilot.pause()


async def test_a_message_that_cannot_be_loaded_says_so():
    async def failing(_message_id: int) -> str:
        raise OSError("database is locked")

    app = Harness(matches(load_text=failing))
    async with app.run_test(size=SIZE) as pilot:
        await _view(pilot)
        notice = text_of(app.screen, "#message-notice")
        assert notice == "Error: could not load message #40: database is locked"
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, PreviewScreen)


async def test_a_huge_message_is_cut_and_says_so():
    async def huge(_message_id: int) -> str:
        return "y" * (SHOWN_MAX + 5)

    app = Harness(matches(load_text=huge))
    async with app.run_test(size=SIZE) as pilot:
        await _view(pilot)
        assert len(app.screen.text) == SHOWN_MAX
        assert text_of(app.screen, "#message-notice") == (
            f"Showing the first {SHOWN_MAX:,} of {SHOWN_MAX + 5:,} characters.")
