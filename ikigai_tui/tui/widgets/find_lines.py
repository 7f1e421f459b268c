"""The scrollback's side of find (Ctrl+F, tui/find_bar.py): the words found are highlighted
in every line drawn, those of the current hit's entry more strongly. A mixin of Scrollback
(its attributes are the scrollback's)."""

from __future__ import annotations

import re

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

__all__ = ["FindLines"]

FOUND = Style(bgcolor="#7a5c00", color="#ffffff")
CURRENT = Style(bgcolor="#e0a000", color="#000000", bold=True)


class FindLines:
    find_pattern: re.Pattern[str] | None = None  # the words found (None: no find)
    find_current: int | None = None  # the current hit's key

    def show_found(self, pattern: re.Pattern[str] | None, current: int | None) -> None:
        self.find_pattern, self.find_current = pattern, current
        self.refresh()  # type: ignore[attr-defined]

    def _current_lines(self) -> range:
        at = next((n for n, i in enumerate(self.items)  # type: ignore[attr-defined]
                   if i.key == self.find_current), None)
        starts = self._starts  # type: ignore[attr-defined]
        if at is None or at >= len(starts):
            return range(0)
        end = starts[at + 1] if at + 1 < len(starts) else len(self._lines)  # type: ignore[attr-defined]
        return range(starts[at], end)

    def found_key(self, index: int) -> tuple | None:
        """What line `index`'s highlight depends on (None: no find)."""
        if self.find_pattern is None:
            return None
        return self.find_pattern, index in self._current_lines()

    def find_styled(self, strip: Strip, index: int) -> Strip:
        """The line `index` with the words found highlighted (a strip cut at their cells)."""
        pattern = self.find_pattern
        if pattern is None:
            return strip
        text = strip.text
        spans = [(m.start(), m.end()) for m in pattern.finditer(text) if m.end() > m.start()]
        if not spans:
            return strip
        style = CURRENT if index in self._current_lines() else FOUND
        cuts = sorted({c for span in spans for c in span} | {strip.cell_length})
        parts = strip.divide(cuts) if len(text) == strip.cell_length else None
        if parts is None:  # wide characters: cells and characters differ; leave it plain
            return strip
        out: list[Segment] = []
        position = 0
        for part in parts:
            segments = list(part)
            if any(s <= position < e for s, e in spans):
                segments = [Segment(seg.text, (seg.style or Style()) + style, seg.control)
                            for seg in segments]
            out.extend(segments)
            position += part.cell_length
        return Strip(out, strip.cell_length)
