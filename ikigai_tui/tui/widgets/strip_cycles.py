"""Painted lines that die by reference counting, not in the garbage collector.

Textual's `Strip` caches what its methods return, and two of them return the strip itself
and cache it, in its own cache: `divide` when the only cut is at its end (the
compositor divides every line it paints, so nearly every painted line) and
`crop_extend` when nothing is cropped or added. Each such line is then a reference cycle
(the strip, its list, its seven caches and their dicts), freed only by the cyclic
collector: a fast stream repaints thousands of lines, and what outlives a young
collection piles up for a full one (issue 14: ~7,000 such objects to collect after a
10,000-piece reply; none with these two cases returning the strip without caching it,
which costs nothing: there is nothing to compute).

`install()` replaces the two methods on `Strip` once; the results are the same.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.style import Style
from textual.strip import Strip

_divide = Strip.divide
_crop_extend = Strip.crop_extend


def divide(self: Strip, cuts: Iterable[int]) -> list[Strip]:
    cuts = list(cuts)
    length = self.cell_length
    if [cut for cut in cuts if cut <= length] == [length]:  # as Textual's version reads them
        return [self]  # one piece: itself (Textual's version caches [self] on self)
    return _divide(self, cuts)  # type: ignore[return-value]


def crop_extend(self: Strip, start: int, end: int, style: Style | None) -> Strip:
    if start == 0 and end == self.cell_length:
        return self  # nothing to crop or add (Textual's version caches self on self)
    return _crop_extend(self, start, end, style)


def install() -> None:
    Strip.divide = divide  # type: ignore[method-assign, assignment]
    Strip.crop_extend = crop_extend  # type: ignore[method-assign]
