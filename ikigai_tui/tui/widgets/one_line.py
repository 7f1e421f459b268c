"""A Static one line high (the status line, the gauge) that a new text only repaints.

`Static.update` asks for a layout of the whole screen (every widget's size looked at
again: a 20-agent screen with three panes, ~25 widgets, a frame of its own) and repaints
even when the text is the one shown. The app's refresh sets the status line and the
gauge on every commit of any agent (five streaming agents: several a second), almost
always to what they already say; a line of fixed height cannot change size.
"""

from __future__ import annotations

from textual.visual import VisualType
from textual.widgets import Static

__all__ = ["OneLine"]


class OneLine(Static):
    _line: VisualType | None = None  # the content last set

    def update(self, content: VisualType = "", *, layout: bool = False) -> None:
        if content == self._line:
            return
        self._line = content
        super().update(content, layout=layout)
