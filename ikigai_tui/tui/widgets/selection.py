"""Selecting text with the mouse in a widget drawn line by line (a mixin of `Scrollback`).

Textual selects text through offsets carried by the drawn cells (`Strip.apply_offsets`,
applied in `render_line`), highlights it through `text_selection`, and copies it (Ctrl+C,
the screen's `copy_text`) through `get_selection`, which reads the widget's own text. A
widget drawn with the line API must provide both; Widget's default reads `_render()`,
which a line widget does not fill.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len
from rich.segment import Segment
from textual.selection import Selection
from textual.strip import Strip


def strips_text(strips: Sequence[Strip]) -> str:
    """The text of lines as a selection reads them (padding at the end of a line dropped)."""
    return "\n".join(strip.text.rstrip() for strip in strips)


def highlight(strip: Strip, span: tuple[int, int], style) -> Strip:
    """The strip with the characters from span[0] to span[1] (-1: the end) in `style`."""
    text = strip.text
    start, end = span
    end = len(text) if end == -1 else min(end, len(text))
    if start >= end:
        return strip
    a, b = cell_len(text[:start]), cell_len(text[:end])
    before, middle, after = strip.divide([a, b, strip.cell_length])
    marked = [Segment(t, (s + style) if s is not None else style, c) for t, s, c in middle]
    return Strip.join([before, Strip(marked, middle.cell_length), after])


class SelectableLines:
    """Selection for a line widget that holds its lines in `_lines`."""

    _lines: Sequence[Strip]

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        return selection.extract(strips_text(self._lines)), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        self.refresh()  # type: ignore[attr-defined]

    def selected_key(self, index: int) -> tuple | None:
        """What line `index`'s highlight depends on (None: it has none)."""
        selection = self.text_selection  # type: ignore[attr-defined]
        span = None if selection is None else selection.get_span(index)
        if span is None:
            return None
        return span, self.screen.get_component_rich_style("screen--selection")  # type: ignore[attr-defined]

    def selected(self, strip: Strip, index: int) -> Strip:
        """Line `index` with the part of it that is selected highlighted."""
        selection = self.text_selection  # type: ignore[attr-defined]
        if selection is None:
            return strip
        span = selection.get_span(index)
        if span is None:
            return strip
        style = self.screen.get_component_rich_style("screen--selection")  # type: ignore[attr-defined]
        return highlight(strip, span, style)
