"""The scrollback of one agent: virtualised, paged from SQLite, streaming in place.

It never holds a widget per message. It keeps a bounded, contiguous range of
transcript items rendered to lines, shows only the lines in view (Textual's line API),
and loads older (or newer) pages from the log when the view nears an edge of the range.
A reply streams into it as Markdown, block by block (widgets/streaming.py): finished
blocks are drawn once, only the last one again, so a long reply costs the same per chunk
at its end as at its start.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Awaitable, Callable, Sequence

from textual import events
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.timer import Timer

from ikigai_tui.tui.render import MAX_ITEM_LINES, folds, render_item
from ikigai_tui.tui.transcript import Item
from ikigai_tui.tui.widgets.lines import Lines, cost
from ikigai_tui.tui.widgets.scrollback_stream import StreamingLines
from ikigai_tui.tui.widgets.selection import SelectableLines
from ikigai_tui.tui.widgets.streaming import STREAM_LINES, MarkdownStream  # noqa: F401

Page = Callable[..., Awaitable[list[Item]]]
PAGE_ITEMS = 40
MAX_LINES = 4000  # lines held (drawn) at most; one item holds MAX_ITEM_LINES at most
EDGE = 2  # screens from an edge of the loaded range at which the next page is fetched


class Scrollback(StreamingLines, SelectableLines, ScrollView, can_focus=True):
    """Shows one agent's transcript. `pages(before=, after=, oldest=, limit=)` reads the log."""

    DEFAULT_CSS = """
    Scrollback { height: 1fr; padding: 0 1; scrollbar-size-vertical: 1; }
    """

    def __init__(self, agent_id: str, pages: Page, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.agent_id = agent_id
        self._pages = pages
        self.items: list[Item] = []
        self._strips: list[Sequence[Strip]] = []
        self._lines = Lines()
        self.at_start = False
        self.at_end = True
        self.rule_key: int | None = None
        self.rule_label = ""
        self.expanded = False
        self._width = 0
        self._stream: MarkdownStream | None = None
        self._stream_from = 0  # index in _lines where the streaming reply begins
        self._stream_timer: Timer | None = None  # draws the reply's last block when due
        self._busy = False
        # Whether the view follows the end: kept explicitly, because Textual ignores a
        # scroll before the first layout and a position test then answers wrongly.
        self.following = True
        self.loaded = False  # whether a page has been read (the latest, at first)
        self._undrawn = False  # older loaded items not drawn yet (see _render_all)
        self._starts: list[int] = []  # the line where each item begins

    # -- loading ---------------------------------------------------------------

    async def latest_page(self) -> list[Item]:
        return await self._pages(limit=PAGE_ITEMS)

    async def load_latest(self) -> None:
        self._show_latest(await self.latest_page())

    def preload(self, items: list[Item]) -> None:
        """The latest page, read before the widget is mounted: drawn at its first layout."""
        self._show_latest(items)

    def _show_latest(self, items: list[Item]) -> None:
        self.at_start = len(items) < PAGE_ITEMS
        self.at_end = True
        self.following = True
        self._set_items(items)
        self.loaded = True
        if self.is_mounted:
            self._follow()

    async def _older(self) -> None:
        if self._busy or self.at_start or not self.items:
            return
        self._busy = True
        try:
            items = await self._pages(before=self._first_key(), limit=PAGE_ITEMS)
            self.at_start = len(items) < PAGE_ITEMS
            if not items:
                return
            anchor = self._anchor()
            self._set_items(items + self.items, keep="start")
            self._keep_in_place(anchor)
        finally:
            self._busy = False

    async def _newer(self) -> None:
        if self._busy or self.at_end or not self.items:
            return
        self._busy = True
        try:
            items = await self._pages(after=self._last_key(), limit=PAGE_ITEMS)
            self.at_end = len(items) < PAGE_ITEMS
            if items:
                anchor = self._anchor()
                self._set_items(self.items + items, keep="end")
                self._keep_in_place(anchor)
        finally:
            self._busy = False

    def _first_key(self) -> int:
        return next((i.key for i in self.items if i.key > 0), 0)

    def _last_key(self) -> int:
        return next((i.key for i in reversed(self.items) if i.key > 0), 0)

    async def action_scroll_home(self) -> None:
        items = await self._pages(oldest=True, limit=PAGE_ITEMS)
        self.at_start, self.at_end = True, len(items) < PAGE_ITEMS
        self._set_items(items, keep="start")
        self.scroll_to(y=0, animate=False, immediate=True)

    async def action_scroll_end(self) -> None:
        self.following = True
        if not self.at_end:
            await self.load_latest()
        else:
            self._follow()

    def _follow(self) -> None:
        """Keep the end in view: now, and again once a pending layout has happened."""
        if self.following and self.at_end:
            # force: before the first layout has set up the scrollbars Textual ignores a
            # plain scroll, and the first frame would show the top of the page.
            self.scroll_end(animate=False, immediate=True, force=True)
            self.call_after_refresh(self._follow_after_layout)

    def _follow_after_layout(self) -> None:
        if self.following and self.at_end:
            self.scroll_end(animate=False, immediate=True)

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        if new < old and new < self.max_scroll_y:
            self.following = False  # the user scrolled up: stop following
        elif new >= self.max_scroll_y:
            self.following = True
        height = max(1, self.size.height)
        if self._undrawn:  # the loaded page is not all drawn yet: positions are not final
            return
        if new < EDGE * height and not self.at_start and not self._busy:
            self.run_worker(self._older(), group="page", exclusive=True)
        elif new > len(self._lines) - (EDGE + 1) * height and not self.at_end and not self._busy:
            self.run_worker(self._newer(), group="page", exclusive=True)

    # -- content ---------------------------------------------------------------

    def _draw_item(self, item: Item) -> Sequence[Strip]:
        return render_item(self.app.console, item, self._content_width(), expanded=self.expanded)

    def _content_width(self) -> int:
        # Never wider than the pane (a narrow pane wraps words rather than clip them).
        return max(1, self.scrollable_content_region.width - 1)

    def _set_items(self, items: list[Item], keep: str = "end") -> None:
        """Replace the loaded range, trimming it to MAX_LINES from the side not kept."""
        if not self.size.width:
            # Not laid out yet: rendering now would wrap at a made-up width and be done
            # again on the first resize. Keep the items; on_resize draws them.
            self.items, self._strips, self._starts = items, [[] for _ in items], []
            return
        known = {id(i): s for i, s in zip(self.items, self._strips) if s}
        # Draw from the side kept and stop at MAX_LINES: what would be trimmed is never
        # drawn (a page can be long, e.g. a child's inherited context).
        order = range(len(items)) if keep == "start" else range(len(items) - 1, -1, -1)
        kept: list[tuple[int, Sequence[Strip]]] = []
        total = 0
        for index in order:
            item = items[index]
            strips = known.get(id(item)) or self._draw_item(item)
            if kept and total + cost(strips) > MAX_LINES:
                if keep == "start":
                    self.at_end = False
                else:
                    self.at_start = False
                break
            kept.append((index, strips))
            total += cost(strips)
        kept.sort(key=lambda pair: pair[0])
        self.items = [items[index] for index, _ in kept]
        self._strips = [strips for _, strips in kept]
        self._rebuild()

    def _rebuild(self) -> None:
        lines = Lines()
        starts: list[int] = []
        for item, strips in zip(self.items, self._strips):
            if self.rule_key is not None and item.key == self.rule_key:
                lines.add(render_item(self.app.console, Item(-1, "rule", self.rule_label),
                                      self._content_width()))
            starts.append(len(lines))
            lines.add(strips)
        self._lines = lines
        self._starts = starts
        self._stream_from = len(lines)
        stream = self._stream
        if stream is not None:  # the streaming reply stays at the end, at the new width
            if stream.width != max(8, self._content_width()):
                stream.redraw(self._content_width())
            lines.tail = stream.lines
        self._resize()

    def _anchor(self) -> tuple[Item, int] | None:
        """The item at the top of the view, and how many of its lines are above the view."""
        if not self.items or not self._starts:
            return None
        y = int(self.scroll_y)
        index = max(0, bisect_right(self._starts, y) - 1)
        return self.items[index], y - self._starts[index]

    def _keep_in_place(self, anchor: tuple[Item, int] | None) -> None:
        """After lines changed above or below the view: show the anchor item where it was."""
        if anchor is None:
            return
        item, offset = anchor
        for index, candidate in enumerate(self.items):
            if candidate is item:
                self.scroll_to(y=self._starts[index] + offset, animate=False, immediate=True,
                               force=True)
                return

    def _resize(self) -> None:
        self.virtual_size = Size(self._content_width(), len(self._lines))
        self.refresh()

    def on_resize(self, event: events.Resize) -> None:
        width = self._content_width()
        if width != self._width:
            self._width = width
            self._render_all()
            self._follow()

    def _render_all(self) -> None:
        """Draw every loaded item at the current width.

        When the view follows the end, only the newest items, enough for two screens,
        are drawn before the next frame; the older ones (Markdown, highlighted code) after
        it. The first frame after start-up or a terminal resize then waits for what it
        shows, not for the whole page.
        """
        if not (self.following and self.at_end):
            item, _offset = self._anchor() or (None, 0)
            self._strips = [self._draw_item(i) for i in self.items]
            self._rebuild()
            self._keep_in_place(None if item is None else (item, 0))  # its lines re-wrapped
            return
        strips: list[Sequence[Strip]] = [[] for _ in self.items]
        need, drawn, index = 2 * max(1, self.size.height), 0, len(self.items)
        while index > 0 and drawn < need:
            index -= 1
            strips[index] = self._draw_item(self.items[index])
            drawn += len(strips[index])
        self._strips = strips
        self._rebuild()
        if index > 0:
            self._undrawn = True
            self.call_after_refresh(self._render_rest)

    def _render_rest(self) -> None:
        if not self._undrawn:
            return
        self._undrawn = False
        anchor = self._anchor()
        self._strips = [s or self._draw_item(i) for i, s in zip(self.items, self._strips)]
        self._rebuild()
        if self.following and self.at_end:
            self._follow()
        else:  # lines were added above the view: keep what is shown in place
            self._keep_in_place(anchor)

    def set_rule(self, key: int | None, label: str) -> None:
        """Draw the window's rule before the item with this key (None: no rule)."""
        if key != self.rule_key or label != self.rule_label:
            anchor = None if self.following else self._anchor()
            self.rule_key, self.rule_label = key, label
            self._rebuild()
            self._keep_in_place(anchor)
            self._follow()  # following: the rule's lines must not push the end out of view

    def toggle_tools(self) -> None:
        self.expanded = not self.expanded
        anchor = None if self.following else self._anchor()
        self._strips = [self._draw_item(i) if i.kind in ("tool_call", "tool_result") or folds(i)
                        else s for i, s in zip(self.items, self._strips)]
        self._rebuild()
        self._keep_in_place(anchor)
        self._follow()

    def add_items(self, items: list[Item]) -> None:
        """New items at the end of the log (shown only when the newest page is loaded);
        none the loaded page holds already (read while their message was on its way)."""
        if not self.at_end:
            return
        last = self._last_key()
        items = [i for i in items if i.key <= 0 or i.key > last]
        if not items:
            return
        anchor = None if self.following else self._anchor()
        self._set_items(self.items + items, keep="end")
        if self.following:
            self._follow()
        else:
            self._keep_in_place(anchor)

    def add_note(self, kind: str, text: str) -> None:
        """A transient line (an error that wrote nothing): shown, not stored."""
        self.add_items([Item(-1, kind, text)])

    # -- drawing ---------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.scrollable_content_region.width
        if index >= len(self._lines):
            return Strip.blank(width, self.rich_style)
        # The widget's style under every segment: text without a background of its own
        # takes the pane's, not the terminal's default.
        style = self.rich_style
        strip = self.selected(self._lines[index], index)
        return strip.crop_extend(scroll_x, scroll_x + width, style).apply_style(style) \
            .apply_offsets(scroll_x, index)
