"""Drawing the scrollback's loaded items: what the view shows first, the rest in slices.

A mixin of Scrollback (widgets/scrollback.py). Rendering a message (Markdown, highlighted
code) costs a few milliseconds; a page of 40 of them ~100 ms, enough to freeze the screen
if done at once. So a page that replaces the loaded range (a jump: Ctrl+Home, Ctrl+End, to
an id, a click on the history bar; a resize) draws the items the view will show before
the frame, and the others after it, nearest first, a slice of at most SLICE seconds each
turn, keeping what is shown in place; a page read as the view nears an edge of the range
is drawn after the frame the same way (it is off screen). Until they are drawn no page is
read (their positions are not final).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from textual.strip import Strip

from ikigai_tui.tui.transcript import Item
from ikigai_tui.tui.warmup import lexers_busy

SLICE = 0.008  # seconds of drawing per turn of the loop, after the first frame
LEXER_WAIT = 0.01  # seconds between two looks at the lexers' thread
MARGIN = 2  # lines drawn past the view's height before the frame
perf = time.perf_counter


class Drawing:
    # Held by Scrollback (declared here for readers and type checkers).
    items: list[Item]
    _strips: list[Sequence[Strip]]
    _undrawn: bool
    following: bool
    at_start: bool
    at_end: bool

    def _draw_first(self, items: list[Item], at: int | None) -> None:
        """Make `items` the loaded range and draw what the view shows: from item `at` down
        (None: the end, bottom up), and above it when those do not fill the view. The
        rest is drawn after the frame (`_draw_slices`)."""
        self.items = items
        self.look.keep(items)
        if self.look.show_ids:
            self.look.id_width = self.look.wanted_id_width(items)
        strips: list[Sequence[Strip]] = [[] for _ in items]
        need = max(1, self.size.height) + MARGIN
        drawn = 0
        start = len(items) - 1 if at is None else at
        below = range(start, len(items)) if at is not None else range(0)
        above = range(start if at is None else start - 1, -1, -1)
        for order in (below, above):
            for index in order:
                if drawn >= need:
                    break
                strips[index] = self._draw_item(items[index])
                drawn += len(strips[index])
        self._strips = strips
        self._rebuild()
        self._undrawn = not all(strips)
        self._slice_from = start
        self._slice_keep = "end" if at is None else "start"
        if self._undrawn:
            self._next_slice()

    def _add_undrawn(self, items: list[Item], side: str) -> None:
        """A page read at one side ("start": older, "end": newer) of the loaded range: added
        undrawn, and drawn after the frame in slices (nearest the range first), keeping what
        is shown in place. Trimmed to the line bound from the other side once drawn."""
        anchor = self._anchor()
        blank: list[Sequence[Strip]] = [[] for _ in items]
        if side == "start":
            self.items, self._strips = items + self.items, blank + self._strips
            self._slice_from = len(items) - 1
        else:
            self._slice_from = len(self.items)
            self.items, self._strips = self.items + items, self._strips + blank
        self._slice_keep = side
        self.look.keep(self.items)
        if self.look.show_ids and self.look.wanted_id_width(self.items) != self.look.id_width:
            self.look.id_width = self.look.wanted_id_width(self.items)  # a wider gutter: all
            self._strips = [[] for _ in self.items]
        self._rebuild()
        self._keep_in_place(anchor)
        self._undrawn = True
        self._next_slice()

    def _next_slice(self) -> None:
        if not getattr(self, "_slice_due", False):
            self._slice_due = True
            self.call_after_refresh(self._draw_slices)

    def _draw_slices(self) -> None:
        """Draw the items not drawn yet, nearest the view first, for SLICE seconds; again
        after the next frame while some are left. Not while the page's lexers compile in
        their thread (tui/warmup.py): the items off screen wait that long (~30 ms)."""
        self._slice_due = False
        if not self._undrawn:
            return
        if lexers_busy():
            self._slice_due = True
            self.set_timer(LEXER_WAIT, self._draw_slices)
            return
        deadline = perf() + SLICE
        follow = self.following and self.at_end
        anchor = None if follow else self._anchor()
        strips, items = self._strips, self.items
        near = min(max(0, getattr(self, "_slice_from", 0)), max(0, len(items) - 1))
        order = sorted(range(len(items)), key=lambda i: (abs(i - near), -i))
        for index in order:
            if not strips[index]:
                strips[index] = self._draw_item(items[index])
                if perf() > deadline:
                    break
        self._rebuild()
        if follow:
            self._follow()
        else:
            self._keep_in_place(anchor)
        if not all(strips):
            self._next_slice()
            return
        self._undrawn = False
        self._bound("end" if follow else getattr(self, "_slice_keep", "start"))
        if self._short():  # hidden messages: still too few lines to fill the view
            self._fill()
        else:
            self._near_edge()

    def _render_all(self) -> None:
        """Draw every loaded item at the current width (a resize): the ones in view before
        the next frame, the others after it."""
        if self.following and self.at_end:
            self._draw_first(self.items, None)
            return
        anchor = self._anchor()
        at = 0 if anchor is None else next(i for i, x in enumerate(self.items) if x is anchor[0])
        self._draw_first(self.items, at)
        if anchor is not None:
            self._keep_in_place((anchor[0], 0))  # its lines re-wrapped
