"""The progress modal shown while a matcher runs: chunks done of the total, elapsed
time, Esc cancels (False), the caller's finish() closes it (True)."""

from __future__ import annotations

import pytest
from textual.widgets import ProgressBar, Static

from ikigai_tui.tui.screens.help import HelpScreen
from ikigai_tui.tui.screens.matching import MatchingScreen, elapsed_text

from .harness import Harness

SIZE = (120, 40)
TITLE = 'Forget: finding "database schema"'


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def status(screen: MatchingScreen) -> str:
    return screen.query_one("#matching-status", Static).render().plain


@pytest.mark.parametrize(("seconds", "shown"), [(0, "elapsed 0 s"), (59.9, "elapsed 59 s"),
                                                (75, "elapsed 1:15"), (3600, "elapsed 60:00")])
def test_elapsed_text(seconds, shown):
    assert elapsed_text(seconds) == shown


async def test_progress_moves_the_bar_and_the_status():
    clock = Clock()
    screen = MatchingScreen(TITLE, "openai/gpt-4o-mini (LLM)", clock=clock)
    app = Harness(screen)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        bar = screen.query_one(ProgressBar)
        assert str(screen.query_one(".dialog").border_title) == TITLE
        assert screen.query_one("#matching-matcher", Static).render().plain == \
            "matcher: openai/gpt-4o-mini (LLM)"
        assert bar.total is None  # not known yet: indeterminate
        assert status(screen) == "Reviewing the context… · elapsed 0 s"
        screen.progress(0, 8)
        clock.now += 4
        screen.progress(3, 8)
        await pilot.pause()
        assert (bar.total, bar.progress) == (8, 3)
        assert status(screen) == "3 of 8 chunks reviewed · elapsed 4 s"
        clock.now += 61
        await pilot.pause(0.7)  # the elapsed time ticks on its own
        assert status(screen) == "3 of 8 chunks reviewed · elapsed 1:05"
        screen.progress(1, 1)
        await pilot.pause()
        assert status(screen).startswith("1 of 1 chunk reviewed")
        assert app.results == []


async def test_progress_before_mount_is_shown_once_mounted():
    screen = MatchingScreen(TITLE, clock=Clock())
    screen.progress(2, 5)
    app = Harness(screen)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert (screen.query_one(ProgressBar).total, screen.query_one(ProgressBar).progress) == (5, 2)
        assert not screen.query("#matching-matcher")
        assert status(screen).startswith("2 of 5 chunks reviewed")


async def test_escape_dismisses_with_false_and_finish_after_it_does_nothing():
    screen = MatchingScreen(TITLE, clock=Clock())
    app = Harness(screen)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert app.results == [False]
        assert screen.closed and app.screen is not screen
        base = app.screen
        screen.finish()  # the matcher ends just after the cancel
        screen.progress(4, 4)
        await pilot.pause()
        assert app.results == [False] and app.screen is base


async def test_finish_dismisses_with_true_once():
    screen = MatchingScreen(TITLE, clock=Clock())
    app = Harness(screen)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen.progress(4, 4)
        screen.finish()
        await pilot.pause()
        assert app.results == [True]
        base = app.screen
        screen.finish()
        await pilot.press("escape")
        await pilot.pause()
        assert app.results == [True] and app.screen is base


async def test_finish_closes_it_under_another_dialog():
    screen = MatchingScreen(TITLE, clock=Clock())
    app = Harness(screen)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.push_screen(HelpScreen([], []))
        await pilot.pause()
        screen.finish()
        await pilot.pause()
        assert app.results == [True]
        assert not isinstance(app.screen, (HelpScreen, MatchingScreen))
