"""The preview's items and where each goes: which line of the list shows which item, or
which exchange's header. Plain data, no Textual: the list widget (preview_list.py) draws
from it and the screen (preview.py) sums it.

When any item belongs to an exchange, items are grouped by exchange (in order of first
appearance) under one header line each, `exchange #41 · 3 messages · 1,240 tokens`. An
item takes one line (box, id, role, tokens, first line), plus a second line with the
matcher's reason when it has one: on its own line a reason stays readable at 80 columns.
"""

from __future__ import annotations

from dataclasses import dataclass

from ikigai_tui.tui.safe_text import sanitize

__all__ = ["Layout", "PreviewItem", "first_line_of", "one_line", "plural"]

FIRST_LINE_MAX = 400  # characters kept of a first line; the row cuts it to fit with "…"
REASON_MAX = 400


@dataclass(frozen=True)
class PreviewItem:
    """One message offered in the preview. `exchange`: the id of the first message of the
    exchange it belongs to (items are grouped by it); `reason`: the matcher's."""

    id: int
    role: str
    first_line: str
    tokens: int
    checked: bool = True
    reason: str | None = None
    exchange: int | None = None
    raw: float | None = None  # its count unscaled (the totals add these, then scale)


def first_line_of(text: str) -> str:
    """The first non-blank line of `text`, sanitized, tabs as spaces, capped in length."""
    for line in text.splitlines():
        if line.strip():
            return sanitize(line.strip().expandtabs(4))[:FIRST_LINE_MAX]
    return ""


def one_line(text: str) -> str:
    """`text` on one line: sanitized, runs of whitespace as one space, capped in length."""
    return sanitize(" ".join(text.split()))[:REASON_MAX]


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


class Layout:
    """Flat arrays from line to item and back, built once (O(items)).

    `line_ref[line]`: the item index shown (>= 0), or ~g for the header of group g;
    `line_sub[line]`: 0 for a row (an item's or a header), 1 for an item's reason;
    `item_line[i]`: item i's first line; `group_of[i]`: item i's group; `group_items[g]`:
    the range of item indexes of group g, shown from line `header_line[g]` on. `items`
    are in display order (grouped). Without exchanges there is one group and no header.
    """

    def __init__(self, items: list[PreviewItem]) -> None:
        self.grouped = any(item.exchange is not None for item in items)
        groups: dict[int | None, list[PreviewItem]] = {}
        for item in items:
            groups.setdefault(item.exchange if self.grouped else None, []).append(item)
        self.items: list[PreviewItem] = [item for members in groups.values() for item in members]
        self.headers: list[str] = []
        self.line_ref: list[int] = []
        self.line_sub: list[int] = []
        self.item_line: list[int] = []
        self.group_of: list[int] = []
        self.group_items: list[range] = []
        self.header_line: list[int] = []
        ref, sub, index = self.line_ref, self.line_sub, 0
        for group, (exchange, members) in enumerate(groups.items()):
            self.header_line.append(len(ref))
            self.group_items.append(range(index, index + len(members)))
            if self.grouped:
                tokens = sum(item.tokens for item in members)
                where = f"exchange #{exchange}" if exchange is not None else "outside any exchange"
                ref.append(~len(self.headers))
                sub.append(0)
                self.headers.append(f"{where} · {plural(len(members), 'message')} · "
                                    f"{plural(tokens, 'token')}")
            for item in members:
                self.group_of.append(group)
                self.item_line.append(len(ref))
                ref.append(index)
                sub.append(0)
                if item.reason:
                    ref.append(index)
                    sub.append(1)
                index += 1
        self.group_count = len(groups)

    def lines_of(self, index: int) -> int:
        return 2 if self.items[index].reason else 1

    def group_lines(self, group: int) -> tuple[int, int]:
        """The first line of group `group` and how many lines it takes (header included)."""
        members = self.group_items[group]
        last = members[-1] if members else None
        end = len(self.line_ref) if last is None else self.item_line[last] + self.lines_of(last)
        return self.header_line[group], end - self.header_line[group]

    def row_start(self, line: int) -> int:
        """The first line of the row `line` is in (an item's reason is part of its row)."""
        return line - 1 if self.line_sub[line] else line

    def row_end(self, line: int) -> int:
        """The line after the row that starts at `line`."""
        ref = self.line_ref[line]
        return line + (1 if ref < 0 else self.lines_of(ref))

    def item_at(self, line: int) -> int | None:
        """The item shown on `line`; None on a header or past the end."""
        if not 0 <= line < len(self.line_ref):
            return None
        ref = self.line_ref[line]
        return ref if ref >= 0 else None

    def span(self, index: int) -> tuple[int, int]:
        """The lines to keep in view for item `index`: its own, and its group's header
        when it is the group's first item."""
        top = self.item_line[index]
        bottom = top + self.lines_of(index)
        if top and self.line_ref[top - 1] < 0:
            top -= 1
        return top, bottom
