"""The scrollback's scrollbar, standing for the whole history rather than the loaded page.

The scrollback holds a page or a few of a transcript that can be 100,000 messages long;
Textual's own scrollbar would show where the view is within those pages. `History` keeps
the key of every entry of the transcript (ids only: 8 bytes a message), so the bar's
thumb can stand for where the view is among all of them, and be as tall as the share of
the history in view. A click on the bar jumps there (its page read around that entry); a
drag of the thumb jumps as it goes. Without a history (a scrollback whose pages cannot
list their keys), or with all of it loaded, it is Textual's scrollbar (by lines).
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from math import ceil
from collections.abc import Iterable
from collections.abc import Sequence, Sized
from typing import TYPE_CHECKING, Protocol

from rich.segment import Segment, Segments
from rich.style import Style
from textual import events
from textual.scrollbar import ScrollBar

from ikigai_tui.tui.widgets.styled_lines import FewKindsOfRows

if TYPE_CHECKING:
    from textual.geometry import Size

    from ikigai_tui.tui.transcript import Item

SCALE = 64  # sub-units per message: the thumb moves smoothly through a short history


class History:
    """The keys of a transcript's entries, in order."""

    def __init__(self, keys: Iterable[int]) -> None:
        self.keys = array("q", keys)

    def __len__(self) -> int:
        return len(self.keys)

    def add(self, keys: Iterable[int]) -> None:
        """Entries appended to the log (keys beyond the last known)."""
        last = self.keys[-1] if self.keys else 0
        self.keys.extend(k for k in keys if k > last)

    def index(self, key: int) -> int:
        """Where the entry `key` is (or would be) among all of them."""
        return bisect_left(self.keys, key)

    def key_at(self, index: int) -> int:
        return self.keys[max(0, min(index, len(self.keys) - 1))]


class PagedView(Protocol):
    """What the bar reads of the scrollback it stands in (widgets/scrollback.py's), so
    that this module does not import the scrollback that imports it."""

    history: History | None
    items: Sequence[Item]
    _starts: Sequence[int]  # the line where each item begins
    _lines: Sized
    at_start: bool
    at_end: bool

    @property
    def size(self) -> Size: ...

    @property
    def scroll_y(self) -> float: ...

    @property
    def max_scroll_y(self) -> float: ...

    def jump_to_ratio(self, ratio: float, room: float) -> None: ...


def geometry(sb: PagedView) -> tuple[float, float, float] | None:
    """(entries in all, the one at the top of the view (fractional), entries in view) in
    the history's terms; None when the scrollback has no history or nothing loaded."""
    history = sb.history
    if history is None or not len(history) or not sb.items or not sb._starts:
        return None
    if sb.at_start and sb.at_end:  # the whole history is loaded: Textual's bar, by lines
        return None
    total = len(history)
    height = max(1, sb.size.height)
    top = int(sb.scroll_y)
    first, shown = _span(sb, top, height)
    if first is None:
        return None
    first = max(0.0, min(first, total - shown))
    if sb.at_end and sb.scroll_y >= sb.max_scroll_y:
        first = max(0.0, total - shown)
    elif sb.at_start and sb.scroll_y <= 0:
        first = 0.0
    return float(total), first, shown


def _span(sb: PagedView, top: int, height: int) -> tuple[float | None, float]:
    """The history index at the top of the view (with the part of its item above the view)
    and how many entries the view shows."""
    starts, items, history = sb._starts, sb.items, sb.history
    assert history is not None
    end_line = len(sb._lines)
    at = max(0, bisect_right(starts, top) - 1)
    last = max(at, bisect_right(starts, top + height - 1) - 1)
    keyed = [i for i in range(at, min(last, len(items) - 1) + 1) if items[i].key > 0]
    if not keyed:
        return None, 1.0

    def lines_of(i: int) -> int:
        return max(1, (starts[i + 1] if i + 1 < len(starts) else end_line) - starts[i])

    first_item = keyed[0]
    above = max(0, top - starts[first_item]) / lines_of(first_item)
    first = history.index(items[first_item].key) + min(above, 0.99)
    shown = max(1.0, float(len(keyed)))
    return first, shown


class HistoryBar(FewKindsOfRows, ScrollBar):
    """The vertical scrollbar of a Scrollback: see the module's doc."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._grab_offset: float | None = None
        self._painted: tuple | None = None  # what the bar drew last depended on (_look)

    def _look(self) -> tuple:
        """Everything the bar's drawing depends on: its size, where the thumb stands
        (among all the history, or Textual's by lines), hover and grab, the colours."""
        styles = self.parent.styles  # type: ignore[union-attr]
        thumb = self._thumb()  # in eighths of a cell, as Textual's renderer draws it
        where = (None if thumb is None else (int(thumb[1] * 8), ceil(thumb[2] * 8)),
                 None if thumb is not None else (self.window_virtual_size, self.window_size,
                                                 self.position))
        return (self.size, where, self.grabbed, self.mouse_over, self.app.theme,
                styles.scrollbar_color, styles.scrollbar_background,
                styles.scrollbar_color_hover, styles.scrollbar_background_hover,
                styles.scrollbar_color_active, styles.scrollbar_background_active)

    def refresh(self, *regions, **options):
        """A repaint asked for while the bar would draw what it shows is skipped: each
        line a reply streams into a pane changes its scrollback's size and scroll, and
        Textual repaints the bar three or four times for it, where over a long history
        the thumb does not move (with five agents streaming, a third of each frame)."""
        if (not regions and not options.get("layout") and not options.get("recompose")
                and self._painted is not None and self.parent is not None
                and self._look() == self._painted):
            return self
        return super().refresh(*regions, **options)

    def render(self):
        if self.parent is not None:
            self._painted = self._look()
        return super().render()

    @property
    def scrollback(self) -> PagedView:
        return self.parent  # type: ignore[return-value]

    def _thumb(self) -> tuple[float, float, float, float] | None:
        """(bar height, thumb top, thumb height, entries it can move over) in cells."""
        shape = geometry(self.scrollback)
        size = self.size.height
        if shape is None or not size:
            return None
        total, first, shown = shape
        if shown >= total:
            return float(size), 0.0, float(size), 0.0
        thumb = max(1.0, size * shown / total)
        top = (size - thumb) * first / (total - shown)
        return float(size), top, thumb, total - shown

    def _render_bar(self, scrollbar_style: Style):
        shape = geometry(self.scrollback)
        if shape is None:
            return super()._render_bar(scrollbar_style)
        total, first, shown = shape
        if shown >= total:  # all in view: an empty track
            shown, total = 0.0, 1.0
        segments = self.renderer.render_bar(
            size=max(1, self.size.height), virtual_size=total * SCALE,
            window_size=shown * SCALE, position=first * SCALE, thickness=self.thickness,
            vertical=True, back_color=scrollbar_style.bgcolor, bar_color=scrollbar_style.color)
        # Without Textual's actions (page up, page down, grab): this bar's own handlers jump.
        plain = [Segment(s.text, Style(color=s.style.color, bgcolor=s.style.bgcolor,
                                       reverse=s.style.reverse) if s.style else None)
                 for s in segments.segments]
        return Segments(plain, new_lines=True)

    async def _on_mouse_down(self, event: events.MouseDown) -> None:
        thumb = self._thumb()
        if thumb is None:
            return  # Textual's scrollbar
        event.prevent_default()
        event.stop()
        size, top, height, room = thumb
        y = event.y
        if top <= y < top + height:
            self._grab_offset = y - top
            self.capture_mouse()
            return
        self._jump(size, height, room, y + 0.5 - height / 2)  # centred on the cell clicked

    async def _on_mouse_move(self, event: events.MouseMove) -> None:
        if self._grab_offset is None:
            return
        event.prevent_default()
        event.stop()
        thumb = self._thumb()
        if thumb is not None:
            size, _top, height, room = thumb
            self._jump(size, height, room, event.y - self._grab_offset)

    async def _on_mouse_up(self, event: events.MouseUp) -> None:
        if self._grab_offset is not None:
            self._grab_offset = None
            self.release_mouse()

    def _jump(self, size: float, height: float, room: float, thumb_top: float) -> None:
        """Show the part of the history the thumb would stand for with its top here."""
        if size <= height:
            return
        ratio = max(0.0, min(1.0, thumb_top / (size - height)))
        self.scrollback.jump_to_ratio(ratio, room)
