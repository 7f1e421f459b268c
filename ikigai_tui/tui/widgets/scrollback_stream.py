"""The streaming reply at the end of a scrollback (a mixin of `Scrollback`).

The reply's lines are a `MarkdownStream`'s (widgets/streaming.py), kept as the tail of
the scrollback's `Lines`: a piece repaints only the lines that changed, and the reply's
last block is drawn again by a timer when it is due. A pane opened while the agent
streams starts with the reply so far (`start_stream`), and skips the pieces it holds.
While a reply streams, full garbage collections are put off (heap.defer_full_collections:
each would walk all the reply's lines, a stall of 10-40 ms); the one put off runs on a
turn of its own shortly after the last reply streaming ends (not in the same turn as
the repaint and the committed reply's drawing, which would add up).

A pane that is not the active one (`background`) repaints a streaming reply at most every
BACKGROUND_FRAME seconds: the pieces are fed as they come, their lines drawn together. Five
replies streaming 50 pieces a second each would otherwise lay out and repaint their panes
250 times a second, and the key the user types into the active pane waits behind them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.geometry import Size
from textual.timer import Timer

from ikigai_tui.support.heap import collect, defer_full_collections, resume_full_collections
from ikigai_tui.tui.widgets.streaming import MarkdownStream

if TYPE_CHECKING:
    from ikigai_tui.tui.lines import Lines

COLLECT_AFTER = 0.1  # seconds after the last reply ends: its repaint and commit are drawn
BACKGROUND_FRAME = 0.2  # seconds: a background pane's streaming reply is drawn this often (5 a second)


class StreamingLines:
    """Streaming for `Scrollback`, which provides the attributes declared here."""

    _lines: Lines
    _stream: MarkdownStream | None
    _stream_from: int  # index in _lines where the streaming reply begins
    _stream_timer: Timer | None  # draws the reply's last block when due
    at_end: bool
    following: bool
    _background = False  # not the active pane: streamed pieces are drawn every BACKGROUND_FRAME
    _held: int | None = None  # a background pane's first changed line not drawn yet
    _held_timer: Timer | None = None

    @property
    def background(self) -> bool:
        return self._background

    @background.setter
    def background(self, value: bool) -> None:
        self._background = value
        if not value:
            self._draw_held()  # the pane the user turns to shows the reply as it is now

    def stream(self, piece: str, index: int = 0) -> None:
        """A piece of the reply the agent is streaming. `index` counts the reply's pieces
        (0: not counted): a piece already in the partial reply this pane opened with
        (`start_stream`) is not shown twice."""
        if not self.at_end:
            return
        stream = self._stream
        if stream is None:
            stream = self._new_stream()
        elif 0 < index <= stream.pieces:
            return
        changed = stream.feed(piece)
        if not self._background:
            self._show_stream(changed)
            return
        if changed is not None:
            self._held = changed if self._held is None else min(self._held, changed)
        if self._held_timer is None:
            self._held_timer = self.set_timer(BACKGROUND_FRAME, self._draw_held)

    def _draw_held(self) -> None:
        """Draw what a background pane held back (its changed lines, its due timer)."""
        if self._held_timer is not None:
            self._held_timer.stop()
            self._held_timer = None
        held, self._held = self._held, None
        if self._stream is not None:
            drawn = self._stream.flush()  # all that came in the frame
            self._show_stream(held if drawn is None else drawn if held is None else min(held, drawn))

    def start_stream(self, text: str, pieces: int) -> None:
        """The reply the agent was already streaming when this pane opened, whole."""
        self.end_stream()
        if text and self.at_end:
            stream = self._new_stream()
            stream.feed(text)
            stream.pieces = pieces
            stream.flush()
            self._show_stream(0)

    def _new_stream(self) -> MarkdownStream:
        self._stream = stream = MarkdownStream(self.app.console, self._content_width(),
                                               palette=self.palette)
        self._stream_from = len(self._lines)
        self._lines.tail = stream.lines
        defer_full_collections(self)
        return stream

    def _show_stream(self, changed: int | None) -> None:
        """Repaint the reply's lines from `changed` on (None: none changed), and have its
        last block drawn when it is due."""
        stream = self._stream
        if stream is None:
            return
        if changed is not None:
            height = len(self._lines)
            self.virtual_size = Size(self._content_width(), height)
            start = self._stream_from + changed
            self.refresh_lines(start, max(1, height - start))
            if self.following:
                self._follow()
        delay = stream.pending()
        if delay is not None and self._stream_timer is None:
            self._stream_timer = self.set_timer(delay, self._flush_stream)

    def _flush_stream(self) -> None:
        self._stream_timer = None
        if self._stream is not None:
            self._show_stream(self._stream.flush())

    def end_stream(self) -> None:
        """Drop the streamed lines: the committed reply is added as an item instead."""
        if self._held_timer is not None:
            self._held_timer.stop()
            self._held_timer = None
        self._held = None
        if self._stream_timer is not None:
            self._stream_timer.stop()
            self._stream_timer = None
        if self._stream is not None:
            self._lines.drop_tail()
            self._lines.tail = []
            self._stream = None
            self._resize()
        self._stream_ended()

    def _stream_ended(self) -> None:
        if resume_full_collections(self):  # once the end's own drawing is done
            self.app.set_timer(COLLECT_AFTER, collect, name="collect put off")

    def on_unmount(self) -> None:
        if resume_full_collections(self):  # a pane closed mid-reply
            collect()
