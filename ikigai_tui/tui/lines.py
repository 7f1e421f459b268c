"""The scrollback's lines: blocks of Strips, some of them made only when shown.

A transcript item normally renders to a short list of Strips. A huge one shown whole
(a 10 MB reply, once the user asks for all of it) would be hundreds of thousands of
Strips: `WrappedText` instead keeps the text and where each line starts, and makes a
line's Strip when the view asks for it. `Lines` strings blocks together without copying
them, and keeps a mutable tail for the reply that is streaming.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterator, Sequence
from itertools import accumulate
from typing import overload

from rich.cells import cell_len, get_character_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

LAZY_COST = 100  # what a lazily made block counts for against the scrollback's line bound

# Every character rich measures as one cell; a text made only of these wraps by slicing.
try:
    from rich.cells import _is_single_cell_widths as _single_cells
except ImportError:  # pragma: no cover  (another rich)
    def _single_cells(text: str) -> bool:
        return cell_len(text) == len(text)


def cost(block: Sequence[Strip]) -> int:
    """How much a block counts for against the scrollback's bound on held lines."""
    return getattr(block, "cost", None) or len(block)


class _Strips(Sequence[Strip]):
    """A sequence of Strips made on demand: indexes, negative ones and slices."""

    def _line(self, index: int) -> Strip:
        raise NotImplementedError

    @overload
    def __getitem__(self, index: int) -> Strip: ...
    @overload
    def __getitem__(self, index: slice) -> list[Strip]: ...
    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self._line(i) for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self._line(index)


class WrappedText(_Strips):
    """Plain text hard-wrapped at `width` cells; each line's Strip is made on demand.

    Held: the text and two integers per line. Making the index is one pass over the
    text (about 0.3 s for 10 MB of short lines), done once per width.
    """

    cost = LAZY_COST

    def __init__(self, text: str, width: int, style: Style | None = None) -> None:
        self.text = text = text.replace("\t", "    ")
        self.width = width = max(1, width)
        self.style = style or Style()
        self._starts = starts = array("q")
        self._ends = ends = array("q")
        single = _single_cells(text)
        length = len(text)
        pos = 0
        while True:
            end = text.find("\n", pos)
            if end < 0:
                end = length
            if end - pos <= width:
                starts.append(pos)
                ends.append(end)
            elif single or _single_cells(text[pos:end]):
                for start in range(pos, end, width):
                    starts.append(start)
                    ends.append(min(start + width, end))
            else:
                self._wrap_wide(pos, end)
            if end >= length:
                break
            pos = end + 1

    def _wrap_wide(self, pos: int, end: int) -> None:
        """One line holding double-width characters, cut where the cells run out."""
        text, width = self.text, self.width
        start = pos
        while start < end:
            chunk = text[start : min(start + width, end)]
            if _single_cells(chunk):
                take = len(chunk)
            else:
                cells = list(accumulate(map(get_character_cell_size, chunk)))
                take = max(1, bisect_right(cells, width))
            self._starts.append(start)
            self._ends.append(start + take)
            start += take

    def __len__(self) -> int:
        return len(self._starts)

    def _line(self, index: int) -> Strip:
        line = self.text[self._starts[index] : self._ends[index]]
        return Strip([Segment(line, self.style)], cell_len(line))


class Mapped(_Strips):
    """Another sequence's Strips, each passed through `change(index, strip)` when read."""

    def __init__(self, source: Sequence[Strip], change: Callable[[int, Strip], Strip]) -> None:
        self.source = source
        self.change = change
        self.cost = cost(source)

    def __len__(self) -> int:
        return len(self.source)

    def _line(self, index: int) -> Strip:
        return self.change(index, self.source[index])


class Lines(_Strips):
    """Blocks of Strips read as one sequence, plus a tail that grows (the streaming reply)."""

    def __init__(self, blocks: Sequence[Sequence[Strip]] = ()) -> None:
        self._blocks: list[Sequence[Strip]] = []
        self._ends: list[int] = []
        self._fixed = 0
        self.tail: list[Strip] = []
        for block in blocks:
            self.add(block)

    @property
    def cost(self) -> int:
        return sum(cost(block) for block in self._blocks) + len(self.tail)

    def add(self, block: Sequence[Strip]) -> None:
        """A block after the others (not copied); the tail must be empty."""
        assert not self.tail, "blocks go before the streaming tail"
        if len(block):
            self._fixed += len(block)
            self._blocks.append(block)
            self._ends.append(self._fixed)

    def append(self, strip: Strip) -> None:
        self.tail.append(strip)

    def pop(self) -> Strip:
        return self.tail.pop()

    def drop_tail(self) -> None:
        self.tail.clear()

    def __len__(self) -> int:
        return self._fixed + len(self.tail)

    def _line(self, index: int) -> Strip:
        if index >= self._fixed:
            return self.tail[index - self._fixed]
        block = bisect_right(self._ends, index)
        begin = self._ends[block - 1] if block else 0
        return self._blocks[block][index - begin]

    def __iter__(self) -> Iterator[Strip]:
        for block in self._blocks:
            yield from block
        yield from self.tail
