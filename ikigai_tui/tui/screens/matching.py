"""The modal shown while a matcher runs (/forget CRITERIA, /remember CRITERIA).

The caller pushes it, calls `progress(done, total)` as chunks finish (the total may be
unknown at first: the bar then runs indeterminate), and `finish()` when the matcher is
done, which dismisses it with True; then the caller pushes the preview. Esc dismisses it
with False: the caller cancels the side requests, and nothing is written.
Whichever comes first wins; later calls do nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.css.query import NoMatches
from textual.screen import ModalScreen
from textual.widgets import ProgressBar, Static

from ikigai_tui.tui.bindings import MATCHING
from ikigai_tui.tui.safe_text import plain
from ikigai_tui.tui.styles_path import stylesheet
from ikigai_tui.tui.widgets.keybar import KeyBar

__all__ = ["MatchingScreen", "elapsed_text"]

STYLES = stylesheet("screens.tcss")
TICK = 0.5  # seconds between updates of the elapsed time
HINT = "Esc cancels (nothing is written)"


def elapsed_text(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"elapsed {seconds} s"
    minutes, seconds = divmod(seconds, 60)
    return f"elapsed {minutes}:{seconds:02d}"


class MatchingScreen(ModalScreen[bool]):
    """Progress of a matcher: chunks done out of the total, elapsed time, Esc to cancel.

    `clock` gives the time in seconds (tests and snapshots pass a fixed one).
    """

    CSS_PATH = STYLES

    BINDINGS = MATCHING

    def __init__(self, title: str, matcher: str | None = None, *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self._title = title
        self._matcher = matcher
        self._clock = clock
        self._start = clock()
        self.done = 0
        self.total: int | None = None
        self.closed = False  # dismissed, by finish() or by Esc

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog") as dialog:
            dialog.border_title = plain(self._title)
            if self._matcher:
                yield Static(plain(f"matcher: {self._matcher}"), id="matching-matcher")
            yield ProgressBar(total=None, show_eta=False, id="matching-bar")
            yield Static(self._status_text(), id="matching-status")
            yield Static(Text(HINT), classes="hint")
        yield KeyBar()

    def on_mount(self) -> None:
        self._show()
        self.set_interval(TICK, self._tick)

    # ---- what the caller calls ----

    def progress(self, done: int, total: int | None) -> None:
        """`done` chunks of `total` are reviewed (total None or 0: not known yet)."""
        self.done = max(0, done)
        self.total = total if total else None
        self._show()

    def finish(self) -> None:
        """The matcher is done: dismiss with True (no-op once dismissed)."""
        if self.closed:
            return
        self.closed = True
        if self.is_attached and self in self.app.screen_stack:
            if self.app.screen is not self:
                self.pop_until_active()  # e.g. help opened over it
            self.dismiss(True)

    def action_cancel(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.dismiss(False)

    # ---- showing it ----

    def _status_text(self) -> Text:
        if self.total is None:
            words = "Reviewing the context…" if not self.done else f"{self.done:,} chunks reviewed…"
        else:
            noun = "chunk" if self.total == 1 else "chunks"
            words = f"{min(self.done, self.total):,} of {self.total:,} {noun} reviewed"
        return Text(f"{words} · {elapsed_text(self._clock() - self._start)}")

    def _show(self) -> None:
        if self.closed:
            return
        try:
            bar = self.query_one("#matching-bar", ProgressBar)
        except NoMatches:  # not composed yet: on_mount shows it
            return
        if self.total is None:
            bar.update(total=None)
        else:
            bar.update(total=self.total, progress=min(self.done, self.total))
        self.query_one("#matching-status", Static).update(self._status_text())

    def _tick(self) -> None:
        if not self.closed:
            self.query_one("#matching-status", Static).update(self._status_text())
