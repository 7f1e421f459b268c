"""The widget's style, read once per frame by the widgets that draw line by line.

`Widget.rich_style` walks every ancestor's styles to blend the colours (~0.1 ms a read,
seven levels down from the app); Textual's line API draws a frame by calling
`render_line` for every line, and the scrollback and the tree read the style there: 40
reads a frame, most of the time a frame of the agent tree took. The style cannot change
in the middle of a frame (a change restyles and repaints), so it is read once, in
`render_lines`, and the lines take it from `line_style`.
"""

from __future__ import annotations

from rich.style import Style
from textual.geometry import Region
from textual.strip import Strip


class OneStylePerFrame:
    """A mixin for a Widget, before it in the bases."""

    _frame_style: Style | None = None

    def render_lines(self, crop: Region) -> list[Strip]:
        self._frame_style = self.rich_style  # type: ignore[attr-defined]
        try:
            return super().render_lines(crop)  # type: ignore[misc]
        finally:
            self._frame_style = None

    @property
    def line_style(self) -> Style:
        """The widget's rich_style: the frame's while one is drawn."""
        style = self._frame_style
        return self.rich_style if style is None else style  # type: ignore[attr-defined]
