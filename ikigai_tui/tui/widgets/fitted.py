"""A line of parts (`a · b · c`) that fits its width by dropping whole parts (fit.py):
never a dangling " · ", never a word cut while a shorter wording fits."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widgets import Static

from ikigai_tui.tui.fit import fit_parts

__all__ = ["FittedParts"]


class FittedParts(Static):
    """`parts`, fitted at each render to the width the widget has then; the parts at the
    indexes in `drop` go first (in that order), then from the end."""

    _parts: tuple[str, ...] = ()
    _drop: tuple[int, ...] = ()

    def show(self, parts: Sequence[str], drop: Sequence[int] = ()) -> None:
        parts, drop = tuple(parts), tuple(drop)
        if (parts, drop) != (self._parts, self._drop):
            self._parts, self._drop = parts, drop
            self.refresh()

    def render(self) -> Text:
        return Text(fit_parts(self._parts, self.content_size.width or 1_000, self._drop))
