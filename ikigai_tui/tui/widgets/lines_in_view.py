"""The scrollback's lines in view (Textual's line API): each row drawn from the line it
shows, with the selection, find's highlight and the cursor over it. A mixin of Scrollback
(its attributes are the scrollback's).

A drawn row is kept by its index while the line and what it is drawn with stay the same,
so that a scrolled row is the object it was a frame before: Textual's styling of it is
kept by that object (styled_lines.py), and a pane following a streaming reply repaints
only its new lines."""

from __future__ import annotations

from rich.style import Style
from textual.strip import Strip

from ikigai_tui.tui.widgets.styled_lines import kept_at_most

__all__ = ["LinesInView"]


class LinesInView:
    _drawn: dict[int, tuple[Strip, tuple, Strip]]  # index -> (line, key, drawn)

    def render_line(self, y: int) -> Strip:  # type: ignore[override]
        if y == 0 and self._width and self._content_width() != self._width:
            self.call_later(self._check_width)  # drawn at a width it no longer has
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.scrollable_content_region.width
        if index >= len(self._lines):
            return self.cursor_styled(Strip.blank(width, self.line_style), -1, y, width)
        # The widget's style under every segment: text without a background of its own
        # takes the pane's, not the terminal's default.
        style = self.line_style
        line = self._lines[index]
        if self.cursor is not None:  # (its highlight and bar: drawn each time)
            return self._drawn_line(line, index, y, width, scroll_x, style)
        # Kept by index, for the same line drawn the same way (Strip's own caches miss for
        # a line shared by many rows, such as the blank one), so that a scrolled row is the
        # object it was: Textual's styling of it is kept by that (styled_lines.py).
        key = (scroll_x, width, style, self.selected_key(index), self.found_key(index))
        kept = self._drawn.get(index)
        if kept is not None and kept[0] is line and kept[1] == key:
            return kept[2]
        strip = self._drawn_line(line, index, y, width, scroll_x, style)
        while len(self._drawn) >= kept_at_most(self.size.height):
            del self._drawn[next(iter(self._drawn))]  # the oldest
        self._drawn[index] = (line, key, strip)
        return strip

    def _drawn_line(self, line: Strip, index: int, y: int, width: int, scroll_x: int,
                    style: Style) -> Strip:
        strip = self.find_styled(self.selected(line, index), index) \
            .crop_extend(scroll_x, scroll_x + width, style)
        return self.cursor_styled(strip, index, y, width).apply_style(style) \
            .apply_offsets(scroll_x, index)
