"""Find in the active pane (Ctrl+F): a one-line bar over the input. Typing searches as you
type (tui/find.py: the agent's whole transcript, loaded page or not); the bar says the
count ("3 of 17"), and whether the current hit is out of the context; Enter or Down goes
to the next hit, Up to the previous one, wrapping; a hit in a page not loaded is read and
shown. The words are highlighted in the pane (widgets/find_lines.py), the current hit's
more strongly. Esc closes the bar, removes the highlight and goes back to the input.
A newer keystroke cancels the search of an older one (one worker, exclusive)."""

from __future__ import annotations

from typing import Any

from textual import events, work
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Input, Static

from ikigai_tui.tui.find import Finder, Hit, word_pattern, words_of

__all__ = ["FindBar", "FindActions"]

DEBOUNCE = 0.05  # seconds after a keystroke before its search starts
COUNT_WIDTH = 34  # cells of "12 of 1,000+ · forgotten by ..." (longer reasons end in …)
# The bar's own keys, as Help lists them: (keys, what they do); `key` does it.
FIND_KEYS: tuple[tuple[str, str], ...] = (
    ("Enter / Down", "The next hit down the scrollback, newer (past the newest: the oldest)"),
    ("Up", "The previous hit up the scrollback, older (past the oldest: the newest)"),
    ("Esc", "Close the find bar: the marks go, back to the input"),
)
MOVES = ("enter", "down", "up", "escape")


class FindInput(Input):
    """The bar's input: Enter/Down, Up and Esc move or close, before Input's own keys."""

    async def _on_key(self, event: events.Key) -> None:
        bar = self.parent
        if isinstance(bar, FindBar) and event.key in MOVES:
            event.stop()
            event.prevent_default()
            await bar.key(event.key)
            return
        await super()._on_key(event)


class FindBar(Horizontal):
    """The bar of one scrollback's find."""

    DEFAULT_CSS = """
    FindBar { height: 1; dock: bottom; background: $panel; }
    FindBar > FindInput, FindBar > FindInput:focus {
        border: none; height: 1; padding: 0 1; width: 1fr; background: $panel;
    }
    FindBar > #find-count { padding: 0 1; color: $text-muted; text-align: right;
                            text-overflow: ellipsis; text-wrap: nowrap; }
    """

    def __init__(self, finder: Finder, scrollback: Any) -> None:
        super().__init__(id="find-bar")
        self.finder = finder
        self.scrollback = scrollback
        self.hits: list[Hit] = []
        self.more = False
        self.index = -1
        self.query_text = ""
        self._timer: Any = None

    def compose(self) -> ComposeResult:
        field = FindInput(placeholder="Find (Enter/Down next · Up previous · Esc close)",
                          id="find-input")
        field.cursor_blink = False  # a steady cursor: the bar is read while hits are moved
        count = Static("", id="find-count")
        # A count of a fixed width: one sized to its text was laid out a frame late now and
        # then (the input kept the whole row and the count sat on the query's last letter).
        field.styles.width, count.styles.width = "1fr", COUNT_WIDTH
        yield field
        yield count

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(DEBOUNCE, lambda: self.search(event.value))

    @work(exclusive=True, group="find")
    async def search(self, text: str) -> None:
        hits, more = await self.finder.find(text)
        self.query_text, self.hits, self.more = text, hits, more
        self.index = -1
        self.scrollback.show_found(word_pattern(words_of(text)), None)
        if hits:
            await self.go(self._nearest())
        else:
            self._say()

    def _nearest(self) -> int:
        """The last hit at or before the newest entry shown: find starts where you are."""
        shown = [i.key for i in self.scrollback.items if i.key > 0]
        if not shown:
            return len(self.hits) - 1
        bottom = shown[-1]
        before = [n for n, hit in enumerate(self.hits) if hit.key <= bottom]
        return before[-1] if before else 0

    async def go(self, index: int) -> None:
        self.index = index % len(self.hits)
        key = self.hits[self.index].key
        scrollback = self.scrollback
        if not any(i.key == key for i in scrollback.items):
            await scrollback.jump_to(key)
        scrollback.show_found(word_pattern(words_of(self.query_text)), key)
        at = next((n for n, i in enumerate(scrollback.items) if i.key == key), None)
        if at is not None and at < len(scrollback._starts):
            start = scrollback._starts[at]
            top, height = int(scrollback.scroll_y), max(1, scrollback.size.height)
            if not top <= start < top + height - 1:
                scrollback.following = False
                scrollback.scroll_to(y=max(0, start - 1), animate=False, immediate=True, force=True)
        self._say()

    def _say(self) -> None:
        count = self.query_one("#find-count", Static)
        if not self.query_text.strip():
            count.update("")
        elif not self.hits:
            count.update("no match")
        else:
            total = f"{len(self.hits):,}{'+' if self.more else ''}"
            outside = self.hits[self.index].outside if self.index >= 0 else None
            count.update(f"{self.index + 1:,} of {total}" + (f" · {outside}" if outside else ""))

    async def key(self, key: str) -> None:
        if key == "escape":
            self.close()
        elif self.hits:
            await self.go(self.index + (-1 if key == "up" else 1))

    def close(self) -> None:
        self.scrollback.show_found(None, None)
        self.remove()
        self.app.prompt_input.focus()


class FindActions:
    """A mixin of IkigaiApp: Ctrl+F opens (or focuses) the find bar of the active pane."""

    def action_find(self: Any) -> None:
        pane = self.panes.active
        if pane is None:
            return
        bars = list(pane.query(FindBar))
        if bars:
            bars[0].query_one(Input).focus()
            return
        pane.mount(FindBar(Finder(self.session, pane.scrollback.agent_id), pane.scrollback))
