"""The streaming reply at the end of a scrollback (a mixin of `Scrollback`).

The reply's lines are a `MarkdownStream`'s (widgets/streaming.py), kept as the tail of
the scrollback's `Lines`: a piece repaints only the lines that changed, and the reply's
last block is drawn again by a timer when it is due. A pane opened while the agent
streams starts with the reply so far (`start_stream`), and skips the pieces it holds.
While a reply streams, full garbage collections are put off (heap.defer_full_collections:
each would walk all the reply's lines, a stall of 10-40 ms); the one put off runs on a
turn of its own shortly after the last reply streaming ends (not in the same turn as
the repaint and the committed reply's drawing, which would add up).
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


class StreamingLines:
    """Streaming for `Scrollback`, which provides the attributes declared here."""

    _lines: Lines
    _stream: MarkdownStream | None
    _stream_from: int  # index in _lines where the streaming reply begins
    _stream_timer: Timer | None  # draws the reply's last block when due
    at_end: bool
    following: bool

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
        self._show_stream(stream.feed(piece))

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
