"""The preview's list of messages: one line-based widget, however many messages.

A /forget over a long context can offer thousands of matches; one widget per row (or an
OptionList, which measures every option's height up front and again after each prompt
change) makes opening and every keypress slow. This widget draws from flat arrays that
map each line to a group header or a line of an item (preview_rows.Layout), renders only
the lines on screen, and changes one set of ids when a box is ticked: nothing is rebuilt.

The cursor moves over rows: the items and, when they are grouped by exchange, the
exchanges' headers. Space on an item ticks that message alone; on a header it ticks the
whole exchange (or unticks it when all of it is ticked). A header's box shows its
exchange's state: X all ticked, - some (the exchange is split: a question can stay while
its answer goes; `split_count` counts them for the totals line), blank none.
Everything shown is sanitized.
"""

from __future__ import annotations

from collections.abc import Iterable
from math import fsum

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ikigai_tui.tui.bindings import PREVIEW_LIST
from ikigai_tui.tui.fit import cut
from ikigai_tui.tui.safe_text import sanitize
from ikigai_tui.tui.screens.preview_rows import Layout, PreviewItem, first_line_of, one_line

__all__ = ["PreviewList"]

ROLE_WIDTH = 12
INDENT = "  "  # items under a group header
BOX = ("▐", "X", "▌")  # the tick box, as Textual's SelectionList draws it...
UNTICKED = " "  # ... but empty when unticked: the two differ by glyph, not only by colour
PARTLY = "-"  # a header's box when only some of its exchange is ticked


class PreviewList(ScrollView, can_focus=True):
    """The items, ticked or not; posts `Changed` when the ticks change."""

    COMPONENT_CLASSES = {
        "preview-list--header",
        "preview-list--id",
        "preview-list--reason",
        "preview-list--cursor",
        "preview-list--box",
        "preview-list--box-on",
    }

    BINDINGS = PREVIEW_LIST

    DEFAULT_CSS = """
    PreviewList {
        height: auto;
        overflow-x: hidden;
    }
    """

    class Changed(Message):
        """The ticks changed (read the totals from `preview_list`)."""

        def __init__(self, preview_list: PreviewList) -> None:
            super().__init__()
            self.preview_list = preview_list

        @property
        def control(self) -> PreviewList:
            return self.preview_list

    def __init__(self, items: list[PreviewItem], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.line_map = layout = Layout(items)
        self.items = layout.items
        self.grouped = layout.grouped
        self._checked: set[int] = {item.id for item in items if item.checked}
        self._tokens = {item.id: item.tokens for item in items}
        self._items_by_id = {item.id: item for item in items}
        self.total_tokens = sum(self._tokens.values())
        self.checked_tokens = sum(self._tokens[i] for i in self._checked)
        # Ticked items per group, and how many groups are split (some ticked, not all).
        self._group_checked = [sum(self.items[i].id in self._checked for i in members)
                               for members in layout.group_items]
        self.split_count = sum(self._is_split(g) for g in range(len(layout.group_items)))
        self._rows: list[str | None] = [None] * len(self.items)  # sanitized first lines, lazily
        # The line of the row under the cursor: the first item's (not its group's header).
        self.cursor_line: int | None = layout.item_line[0] if self.items else None
        self._id_w = max([len(f"#{item.id}") for item in self.items] + [3])
        self._role_w = min(ROLE_WIDTH, max([len(sanitize(item.role)) for item in self.items] + [4]))
        self._tok_w = max([len(f"{item.tokens:,}") for item in self.items] + [6])

    # ---- what the screen reads ----

    @property
    def line_count(self) -> int:
        return len(self.line_map.line_ref)

    @property
    def group_count(self) -> int:
        return self.line_map.group_count

    @property
    def checked_ids(self) -> list[int]:
        """The ticked ids, sorted."""
        return sorted(self._checked)

    def raw_of(self, ids: Iterable[int]) -> float:
        """The unscaled counts of the items `ids` added up (an item without one: its tokens)."""
        items = self._items_by_id
        return fsum(items[i].tokens if items[i].raw is None else items[i].raw for i in ids)

    @property
    def checked_count(self) -> int:
        return len(self._checked)

    def is_checked(self, item_id: int) -> bool:
        return item_id in self._checked

    @property
    def cursor(self) -> int | None:
        """The index of the item under the cursor; None on a header (or with no items)."""
        return None if self.cursor_line is None else self.line_map.item_at(self.cursor_line)

    @property
    def cursor_group(self) -> int | None:
        """The group whose header is under the cursor, if one is."""
        line = self.cursor_line
        if line is None or self.line_map.line_ref[line] >= 0:
            return None
        return ~self.line_map.line_ref[line]

    @property
    def current(self) -> PreviewItem | None:
        """The item under the cursor (None on a header)."""
        index = self.cursor
        return None if index is None else self.items[index]

    def cursor_span(self) -> tuple[int, int]:
        """The lines the cursor's row takes: (first, after the last)."""
        line = self.cursor_line
        return (0, 0) if line is None else (line, self.line_map.row_end(line))

    def group_box(self, group: int) -> str:
        """What the box on a group's header shows: X all ticked, - some, blank none."""
        ticked = self._group_checked[group]
        return BOX[1] if ticked == len(self.line_map.group_items[group]) else \
            PARTLY if ticked else UNTICKED

    def _is_split(self, group: int) -> bool:
        """Some of an exchange ticked, not all (ungrouped items are no exchange)."""
        return self.grouped and 0 < self._group_checked[group] < len(self.line_map.group_items[group])

    def header_text(self) -> str:
        """The column titles, aligned with the rows."""
        indent = INDENT if self.grouped else ""
        return (f"{indent}{' ' * (len(''.join(BOX)) + 1)}{'id'.ljust(self._id_w)}  "
                f"{'role'.ljust(self._role_w)}  {'tokens'.rjust(self._tok_w)}  first line")

    def line_text(self, line: int) -> str:
        """The plain text of one line of the list (for tests and the benchmark)."""
        width = self.scrollable_content_region.width or 120
        return "".join(segment.text for segment in self._segments(line, width, Style()))

    # ---- changing the ticks ----

    def toggle(self, index: int | None = None) -> None:
        """Tick or untick item `index` (default: the row under the cursor, a header's
        whole exchange included)."""
        if index is None:
            group = self.cursor_group
            if group is not None:
                self.toggle_group(group)
                return
            index = self.cursor
        if index is None:
            return
        self._set(index, self.items[index].id not in self._checked)
        self._refresh_item(index)
        self._refresh_header(self.line_map.group_of[index])
        self.post_message(self.Changed(self))

    def toggle_group(self, group: int) -> None:
        """Tick the whole exchange, or untick it when all of it is ticked already."""
        members = self.line_map.group_items[group]
        checked = self._group_checked[group] < len(members)
        for index in members:
            self._set(index, checked)
        self.refresh_lines(*self.line_map.group_lines(group))
        self.post_message(self.Changed(self))

    def _set(self, index: int, checked: bool) -> None:
        item = self.items[index]
        if (item.id in self._checked) == checked:
            return
        group = self.line_map.group_of[index]
        was_split = self._is_split(group)
        if checked:
            self._checked.add(item.id)
            self.checked_tokens += item.tokens
            self._group_checked[group] += 1
        else:
            self._checked.discard(item.id)
            self.checked_tokens -= item.tokens
            self._group_checked[group] -= 1
        self.split_count += self._is_split(group) - was_split

    def set_all(self, checked: bool) -> None:
        if checked:
            self._checked = set(self._tokens)
            self.checked_tokens = self.total_tokens
            self._group_checked = [len(members) for members in self.line_map.group_items]
        else:
            self._checked = set()
            self.checked_tokens = 0
            self._group_checked = [0] * len(self.line_map.group_items)
        self.split_count = 0
        self.refresh()
        self.post_message(self.Changed(self))

    # ---- the cursor ----

    def move_to(self, index: int) -> None:
        """Put the cursor on item `index`."""
        if self.items:
            self.move_to_line(self.line_map.item_line[max(0, min(len(self.items) - 1, index))])

    def move_to_line(self, line: int) -> None:
        """Put the cursor on the row that `line` is in."""
        if self.cursor_line is None:
            return
        line = self.line_map.row_start(max(0, min(self.line_count - 1, line)))
        old, self.cursor_line = self.cursor_span(), line
        self.refresh_lines(old[0], old[1] - old[0])
        self.refresh_lines(*self._row_lines(line))
        self.scroll_to_cursor()

    def _row_lines(self, line: int) -> tuple[int, int]:
        return line, self.line_map.row_end(line) - line

    def scroll_to_cursor(self) -> None:
        if self.cursor_line is None or not self.is_mounted:
            return
        index = self.cursor
        top, bottom = self.cursor_span() if index is None else self.line_map.span(index)
        self.scroll_to_region(Region(0, top, 1, bottom - top), animate=False, force=True,
                              immediate=True)

    def _page(self, direction: int) -> None:
        if self.cursor_line is not None:
            step = max(1, self.scrollable_content_region.height - 1)
            self.move_to_line(self.cursor_line + direction * step)

    def action_cursor_up(self) -> None:
        if self.cursor_line:
            self.move_to_line(self.cursor_line - 1)

    def action_cursor_down(self) -> None:
        if self.cursor_line is not None:
            end = self.line_map.row_end(self.cursor_line)
            if end < self.line_count:
                self.move_to_line(end)

    def action_page_up(self) -> None:
        self._page(-1)

    def action_page_down(self) -> None:
        self._page(1)

    def action_first(self) -> None:
        self.move_to_line(0)

    def action_last(self) -> None:
        self.move_to_line(self.line_count - 1)

    def action_toggle(self) -> None:
        self.toggle()

    async def _on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or self.cursor_line is None:
            return
        line = offset.y + int(self.scroll_offset.y)
        if line < self.line_count:
            event.stop()
            self.move_to_line(line)
            self.toggle()

    # ---- layout and rendering ----

    def get_content_width(self, container: Size, viewport: Size) -> int:
        return container.width

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self.line_map.line_ref)

    def _set_virtual_size(self) -> None:
        self.virtual_size = Size(self.scrollable_content_region.width, len(self.line_map.line_ref))

    def on_mount(self) -> None:
        self._set_virtual_size()

    def on_resize(self) -> None:
        self._set_virtual_size()
        self.call_after_refresh(self.scroll_to_cursor)

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    # refresh_lines takes lines of the list (virtual) and subtracts the scroll offset
    # itself: subtracting it here too repainted rows above the ones changed.

    def _refresh_item(self, index: int) -> None:
        self.refresh_lines(self.line_map.item_line[index], self.line_map.lines_of(index))

    def _refresh_header(self, group: int) -> None:
        if self.grouped:
            self.refresh_lines(self.line_map.header_line[group])

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        line = int(self.scroll_offset.y) + y
        base = self.rich_style
        if not 0 <= line < len(self.line_map.line_ref):
            return Strip.blank(width, base)
        if self.cursor_line is not None and self.cursor_line <= line < self.line_map.row_end(
                self.cursor_line):
            base = base + self._component("preview-list--cursor")
        return Strip(self._segments(line, width, base)).crop_extend(0, width, base)

    def _component(self, name: str) -> Style:
        """What a component class sets (colours blended over the list's background, so
        that translucent theme colours such as $text-muted come out right)."""
        if not self.is_mounted:
            return Style()
        part = self.get_component_rich_style(name, partial=True)
        full = self.get_component_rich_style(name)
        return Style(color=full.color if part.color else None,
                     bgcolor=full.bgcolor if part.bgcolor else None,
                     bold=part.bold, italic=part.italic, dim=part.dim)

    def _style(self, name: str, base: Style) -> Style:
        return base + self._component(name)

    def _box(self, mark: str, base: Style) -> list[Segment]:
        """The tick box showing `mark`, and the space after it."""
        box_style = self._style("preview-list--box" if mark == UNTICKED else "preview-list--box-on",
                                Style())
        side = Style(color=box_style.bgcolor, bgcolor=base.bgcolor)
        return [Segment(BOX[0], side), Segment(mark, base + box_style), Segment(BOX[2], side),
                Segment(" ", base)]

    def _segments(self, line: int, width: int, base: Style) -> list[Segment]:
        ref = self.line_map.line_ref[line]
        if ref < 0:
            box = self._box(self.group_box(~ref), base)
            header = cut(self.line_map.headers[~ref], width - len(box))
            return box + [Segment(header, self._style("preview-list--header", base))]
        item = self.items[ref]
        indent = INDENT if self.grouped else ""
        if self.line_map.line_sub[line] == 1:
            lead = indent + " " * (len("".join(BOX)) + 1)
            reason = "↳ " + one_line(item.reason or "")
            return [Segment(lead, base),
                    Segment(cut(reason, width - len(lead)), self._style("preview-list--reason", base))]
        ticked = item.id in self._checked
        ident = f"#{item.id}"
        role = sanitize(item.role)
        if len(role) > self._role_w:
            role = role[: self._role_w - 1] + "…"
        text = self._rows[ref]
        if text is None:
            text = self._rows[ref] = first_line_of(item.first_line)
        segments = [
            Segment(indent, base),
            *self._box(BOX[1] if ticked else UNTICKED, base),
            Segment(ident.ljust(self._id_w), self._style("preview-list--id", base)),
            Segment(f"  {role.ljust(self._role_w)}  {f'{item.tokens:,}'.rjust(self._tok_w)}  ", base),
        ]
        used = sum(segment.cell_length for segment in segments)
        if text:
            segments.append(Segment(cut(text, width - used), base))
        else:
            segments.append(Segment(cut("(empty)", width - used), self._style("preview-list--id", base)))
        return segments
