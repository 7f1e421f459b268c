"""A reply while it streams into the scrollback, drawn as Markdown as it arrives.

Parsing the whole reply again for every piece would be quadratic in its length (a
10,000-piece reply would parse 10,000 growing texts). Instead the reply is cut into
Markdown blocks as it arrives: a block is finished at a blank line, after a heading line,
before an opening code fence and at its closing fence (blank lines inside a fence do not
count). A finished block is drawn once, and its lines never change again; only the last,
open block is drawn again as pieces arrive, and at most every `MIN_INTERVAL` seconds, or
ten times as long as its last drawing took (a long code block, highlighted, can take tens
of milliseconds): drawing the reply never takes more than about a tenth of the time.

Bounds: no more than `STREAM_LINES` lines are drawn, and the open block is drawn from its
first `OPEN_CHARS` characters at most (the committed reply is folded at that size too);
what arrives beyond is counted on the last line. So a huge reply, or one huge piece,
costs about what a screenful does.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence

from rich.console import Console
from rich.segment import Segment
from textual.strip import Strip

from ikigai_tui.tui.palette import PLAIN, Palette
from ikigai_tui.tui.render import FOLD_CHARS, MAX_ITEM_LINES, render_item
from ikigai_tui.tui.transcript import Item

STREAM_LINES = MAX_ITEM_LINES  # lines of a streaming reply drawn at most
OPEN_CHARS = FOLD_CHARS  # characters of the open block drawn at most
MIN_INTERVAL = 0.03  # seconds between two drawings of the open block, at least
COST_FACTOR = 10  # ... and at least this many times as long as the last one took

_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r" {0,3}#{1,6}(\s|$)")


def _blank(strip: Strip) -> bool:
    """A line with nothing visible: no text and no background (a code block's padding
    line has a background: it is part of the block)."""
    return all(not seg.text.strip() and (seg.style is None or seg.style.bgcolor is None)
               for seg in strip)


class MarkdownStream:
    """The lines of a streaming reply (`lines`), kept up to date as pieces are fed."""

    def __init__(self, console: Console, width: int,
                 clock: Callable[[], float] = time.monotonic, *, palette: Palette = PLAIN) -> None:
        self.console = console
        self.palette = palette  # the scrollback's colours (tui/palette.py)
        self.width = max(8, width)
        self.clock = clock
        self.text = ""  # everything received
        self.pieces = 0  # how many pieces were fed (a pane opened mid-reply skips those)
        self.more = 0  # characters received and not drawn (shown as a count)
        self.lines: list[Strip] = []
        self._fixed = 0  # lines[:_fixed] are finished blocks: they never change
        self._done = 0  # text[:_done] is in finished blocks
        self._scan = 0  # where the first line not yet looked at begins
        self._searched = 0  # no line end before this (a long line is searched once)
        self._fence: str | None = None  # the open fence's marker, inside a code block
        self._drawn_open = -1  # length of the open block when it was last drawn (-1: never)
        self._next = 0.0  # when the open block may be drawn again
        self._full = False  # STREAM_LINES reached: only the count changes
        self._noted = False  # the last line is the count of what is not drawn

    # -- feeding ---------------------------------------------------------------------

    def feed(self, piece: str) -> int | None:
        """Take a piece; returns the first line that changed, or None when nothing shown
        changed yet (the open block is drawn later: see `pending`, `flush`)."""
        self.pieces += 1
        return self._take(piece)

    def pending(self) -> float | None:
        """Seconds until what arrived should be drawn, None if it is drawn."""
        if not self._stale():
            return None
        return max(0.0, self._next - self.clock())

    def flush(self) -> int | None:
        """Draw what arrived and is not drawn yet, now."""
        if self._full:
            return self._count(force=True)
        return self._draw_open(force=True)

    def _stale(self) -> bool:
        if self._full:
            return len(self.text) - self._done != self.more
        return self._open_size() != self._drawn_open

    def redraw(self, width: int) -> None:
        """Everything again at another width (the pane was resized)."""
        text, pieces = self.text, self.pieces
        self.__init__(self.console, width, self.clock, palette=self.palette)  # type: ignore[misc]
        self.pieces = pieces
        if text:
            self._take(text)
            self.flush()

    def _take(self, piece: str) -> int | None:
        self.text += piece
        if self._full:
            return self._count(force=False)
        first = self._finish_blocks()
        drawn = self._draw_open(force=first is not None)
        if first is None:
            return drawn
        return first if drawn is None else min(first, drawn)

    def _open_size(self) -> int:
        return len(self.text) - self._done

    # -- blocks ----------------------------------------------------------------------

    def _finish_blocks(self) -> int | None:
        """Cut the blocks finished by the complete lines that arrived; draw each once."""
        text = self.text
        first: int | None = None
        while not self._full:
            end = text.find("\n", max(self._scan, self._searched))
            if end < 0:
                self._searched = len(text)
                return first
            start, self._scan = self._scan, end + 1
            line = text[start:end]
            cut: int | None = None
            if self._fence is not None:
                closing = line.strip()
                if closing and set(closing) == {self._fence[0]} and len(closing) >= len(self._fence):
                    self._fence, cut = None, end + 1
            elif not line.strip():
                cut = start
            elif fence := _FENCE.match(line):
                self._fence = fence.group(1)
                cut = start  # what came before the fence is a block of its own
            elif _HEADING.match(line):
                cut = end + 1
            if cut is None or cut <= self._done:
                continue
            block, self._done = text[self._done:cut], cut
            if block.strip():
                changed = self._add_block(block)
                first = changed if first is None else min(first, changed)
        return first

    def _add_block(self, block: str) -> int:
        """A finished block's lines after the others (the open block's lines go)."""
        start, old = self._fixed, self.lines[self._fixed:]
        self._clear_open()
        self._append(self._draw(block))
        self._drawn_open = -1
        if len(self.lines) >= STREAM_LINES:
            del self.lines[STREAM_LINES - 1:]
            self._full = True
            self._note(len(self.text) - self._done)
        self._fixed = len(self.lines) - (1 if self._full else 0)
        changed = self._keep_same(start, old)
        return len(self.lines) if changed is None else changed

    def _draw_open(self, *, force: bool) -> int | None:
        """Draw the open block again if it changed and its time has come (or `force`)."""
        size = self._open_size()
        if size == self._drawn_open:
            return None
        now = self.clock()
        if not force and now < self._next and (size < OPEN_CHARS or self._drawn_open >= OPEN_CHARS):
            return None
        if self._drawn_open >= OPEN_CHARS:  # its drawn head cannot change: count the rest
            self._drawn_open = size
            self._next = now + MIN_INTERVAL
            return self._note(size - OPEN_CHARS)
        old = self.lines[self._fixed:]
        self._clear_open()
        head = self.text[self._done:self._done + OPEN_CHARS]
        if head.strip():
            room = STREAM_LINES - 1 - len(self.lines)
            self._append(list(self._draw(head))[:max(0, room)])
        self._drawn_open = size
        self._next = self.clock() + max(MIN_INTERVAL, COST_FACTOR * (self.clock() - now))
        if size > OPEN_CHARS:
            self._note(size - OPEN_CHARS)
        return self._keep_same(self._fixed, old)

    def _keep_same(self, start: int, old: list[Strip]) -> int | None:
        """After lines[start:] were drawn again (they were `old`): keep the old Strip where
        the new one is the same, and return the first line that changed (None: none).

        Words added to the open block change its last lines only; the lines before stay
        the same objects, so what is drawn from them (the scrollback's and Textual's
        caches, keyed by the line) is still good when the pane scrolls."""
        lines = self.lines
        end = min(len(lines), start + len(old))
        at = start
        while at < end and lines[at] == old[at - start]:
            lines[at] = old[at - start]
            at += 1
        return None if at == len(lines) == start + len(old) else at

    def _clear_open(self) -> int:
        """Drop the open block's lines (and the count); returns where they began."""
        del self.lines[self._fixed:]
        self._noted = False
        return len(self.lines)

    def _append(self, strips: Sequence[Strip]) -> None:
        if self.lines and strips and not _blank(strips[0]):
            self.lines.append(Strip.blank(0))  # the blank line between two blocks
        self.lines.extend(strips)

    def _count(self, *, force: bool) -> int | None:
        """Past STREAM_LINES: the count of what is not drawn, when its time has come."""
        now = self.clock()
        if not force and now < self._next:
            return None
        self._next = now + MIN_INTERVAL
        return self._note(len(self.text) - self._done)

    def _note(self, more: int) -> int:
        """The last line counts what arrived and is not drawn."""
        self.more = more
        if self._noted:
            self.lines.pop()
        self._noted = True
        text = f"… {more:,} more characters arriving"
        self.lines.append(Strip([Segment(text, self.palette.fold)], len(text)))
        return len(self.lines) - 1

    def _draw(self, text: str) -> Sequence[Strip]:
        return render_item(self.console, Item(-1, "assistant", text), self.width, gap=False,
                           palette=self.palette)

