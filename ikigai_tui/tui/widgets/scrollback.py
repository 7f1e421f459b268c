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
from collections.abc import Callable, Sequence

from textual import events
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.scrollbar import ScrollBar
from textual.strip import Strip
from textual.timer import Timer

from ikigai_tui.tui.palette import COMPONENT_CLASSES, Palette, palette_of
from ikigai_tui.tui.render import folds, render_item
from ikigai_tui.tui.transcript import Item
from ikigai_tui.tui.widgets.context_look import ContextLook, key_names_of
from ikigai_tui.tui.widgets.find_lines import FindLines
from ikigai_tui.tui.widgets.cursor import CursorLines
from ikigai_tui.tui.widgets.drawing import Drawing
from ikigai_tui.tui.widgets.frame_style import OneStylePerFrame
from ikigai_tui.tui.widgets.history_bar import History, HistoryBar
from ikigai_tui.tui.widgets.lines_in_view import LinesInView
from ikigai_tui.tui.widgets.layout import Decor, layout
from ikigai_tui.tui.lines import Lines, cost
from ikigai_tui.tui.widgets.paging import EDGE, PAGE_ITEMS, Page, Paging  # noqa: F401
from ikigai_tui.tui.widgets.running_tools import RunningTools, busy_of
from ikigai_tui.tui.widgets.scrollback_stream import StreamingLines
from ikigai_tui.tui.widgets.selection import SelectableLines
from ikigai_tui.tui.widgets.streaming import STREAM_LINES, MarkdownStream  # noqa: F401
from ikigai_tui.tui.widgets.styled_lines import LineStylesCache


MAX_LINES = 4000  # lines held (drawn) at most; one item holds MAX_ITEM_LINES at most


class _Hidden(tuple):
    """The lines of a message hidden from view: none, but drawn (truthy), costing nothing."""

    cost = 0

    def __bool__(self) -> bool:
        return True


HIDDEN: Sequence[Strip] = _Hidden()


class Scrollback(OneStylePerFrame, Paging, Drawing, StreamingLines, RunningTools, SelectableLines,
                 CursorLines, FindLines, LinesInView, ScrollView, can_focus=True):
    """Shows one agent's transcript. `pages(before=, after=, oldest=, limit=)` reads the log;
    when it also has `outside(key)` and `context_version()` (AgentPages does), messages out
    of the agent's context are drawn apart."""

    COMPONENT_CLASSES = COMPONENT_CLASSES
    DEFAULT_CSS = """
    Scrollback { height: 1fr; padding: 0 1; scrollbar-size-vertical: 1; }
    """

    def __init__(self, agent_id: str, pages: Page, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._styles_cache = LineStylesCache()  # a scrolled line is styled once, not per row
        self._drawn: dict[int, tuple[Strip, tuple, Strip]] = {}  # index -> (line, key, drawn)
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
        self.look = ContextLook(pages)
        self._palette: Palette | None = None  # read from the theme at the first draw
        self.history: History | None = None  # every entry's key, for the scrollbar
        self._pairs: dict[int, Item] = {}  # loaded tool calls and results: key -> the other
        self._calls_running: frozenset[int] = frozenset()  # see running_tools.py
        self._ticker: Timer | None = None  # redraws their lines while some run
        self._agent_busy = busy_of(pages)

    @property
    def vertical_scrollbar(self) -> ScrollBar:
        """A scrollbar for the whole history (widgets/history_bar.py), not the loaded page."""
        if self._vertical_scrollbar is None:
            bar = HistoryBar(vertical=True, name="vertical",
                             thickness=self.scrollbar_size_vertical)
            bar.display = False
            self._vertical_scrollbar = bar
            self.app._start_widget(self, bar)
        return self._vertical_scrollbar

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
        if self.show_vertical_scrollbar:
            # Textual moves the thumb only while its bar shows: a scroll made before the
            # lines grew past the view left it at the top.
            self.vertical_scrollbar.position = self.scroll_y

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        if new < old and new < self.max_scroll_y:
            self.following = False  # the user scrolled up: stop following
        elif new >= self.max_scroll_y:
            self.following = True
        self._near_edge()

    def _near_edge(self) -> None:
        """Read the next page when the view nears an edge of the loaded range."""
        if self._undrawn:  # the loaded page is not all drawn yet: positions are not final
            return
        height, y = max(1, self.size.height), self.scroll_y
        if y < EDGE * height and not self.at_start and not self._busy:
            self.read_in_worker(self._older, "page")
        elif y > len(self._lines) - (EDGE + 1) * height and not self.at_end and not self._busy:
            self.read_in_worker(self._newer, "page")

    # -- content ---------------------------------------------------------------

    def _draw_item(self, item: Item) -> Sequence[Strip]:
        if self.look.reason(item) is not None and not self.look.show_outside:
            return HIDDEN
        pair = self._pairs.get(item.key)
        if item.kind == "tool_result" and pair is not None and not self.expanded \
                and pair.meta.get("name") != "slash":
            return HIDDEN  # its call's line tells how it ended (Ctrl+O shows it whole)
        return render_item(self.app.console, item, self._content_width(), expanded=self.expanded,
                           palette=self.palette, outside=item.key in self.look.reasons,
                           id_width=self.look.id_width, pair=pair, running=self.stop_key(item))

    def _pair(self, items: list[Item]) -> set[int]:
        """Find each loaded tool call's result (and each result's call); the keys of the
        items whose partner came or went since they were drawn."""
        calls = {item.key: item for item in items if item.kind == "tool_call"}
        pairs: dict[int, Item] = {}
        for item in items:
            call = calls.get(item.meta.get("call_event")) if item.kind == "tool_result" else None
            if call is not None:
                pairs[call.key], pairs[item.key] = item, call
        old, self._pairs = self._pairs, pairs
        return {key for key in pairs.keys() | old.keys() if pairs.get(key) is not old.get(key)} \
            | self._mark_running(items)

    def _gapped(self) -> list[Sequence[Strip]]:
        """The drawn items, a blank line after a tool call whose next shown item is neither
        a call nor a result (a folded call's result, which would end with it, is hidden)."""
        blocks = list(self._strips)
        following: Item | None = None
        for index in range(len(self.items) - 1, -1, -1):
            item, block = self.items[index], blocks[index]
            if item.kind == "tool_call" and block is not HIDDEN and (
                    following is None or following.kind not in ("tool_call", "tool_result")):
                blocks[index] = Lines([block, [Strip.blank(0)]])
            if block is not HIDDEN and block:
                following = item
        return blocks

    @property
    def palette(self) -> Palette:
        if self._palette is None:
            self._palette = palette_of(self)
        return self._palette

    def notify_style_update(self) -> None:
        super().notify_style_update()
        if self._palette is not None:  # drawn already: a new theme redraws in its colours
            self.call_later(self._restyle)

    def _restyle(self) -> None:
        old, self._palette = self._palette, None
        if self.is_mounted and self.palette != old and self.items:
            self._redraw(lambda _index, _item: True)

    def _content_width(self) -> int:
        # Never wider than the pane (a narrow pane wraps words rather than clip them); the
        # scrollbar's column is kept whether it shows or not: its coming and going (the
        # lines grew past the view) must not leave the lines drawn at another width.
        return max(1, self.content_size.width - self.styles.scrollbar_size_vertical - 1)

    def _set_items(self, items: list[Item], keep: str = "end") -> None:
        """Replace the loaded range, trimming it to MAX_LINES from the side not kept."""
        if not self.size.width:
            # Not laid out yet: rendering now would wrap at a made-up width and be done
            # again on the first resize. Keep the items; on_resize draws them.
            self.items, self._strips, self._starts = items, [[] for _ in items], []
            return
        stale = self._pair(items)
        known = {id(i): s for i, s in zip(self.items, self._strips) if s and i.key not in stale}
        if self.look.show_ids and self.look.wanted_id_width(items) != self.look.id_width:
            self.look.id_width = self.look.wanted_id_width(items)  # a longer id: a wider gutter
            known = {}
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
        self.look.keep(self.items)
        self._rebuild()

    def _bound(self, keep: str) -> None:
        """Trim the loaded range to MAX_LINES from the side not kept (once its items were
        drawn in slices), keeping what is shown in place."""
        if self._lines.cost <= MAX_LINES:
            return
        anchor = None if self.following and self.at_end else self._anchor()
        self._set_items(self.items, keep=keep)
        self._keep_in_place(anchor)
        self._follow()

    def _rebuild(self) -> None:
        stale = self._pair(self.items)  # a page read or trimmed away a call's partner
        if stale:
            self._strips = [self._draw_item(item) if strips and item.key in stale else strips
                            for item, strips in zip(self.items, self._strips)]
        look = self.look
        welcome = self.loaded and self.at_start and not any(i.key > 0 for i in self.items)
        decor = Decor(self.app.console, self._content_width(), self.palette, self.rule_key,
                      self.rule_label, look.reasons, look.show_outside, key_names_of(self.app),
                      welcome)
        lines, starts = layout(self.items, self._gapped(), decor)
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
        if self._vertical_scrollbar is not None:  # the history's share in view changed
            self._vertical_scrollbar.refresh()

    def on_mount(self) -> None:
        # A pane opened later shows what the others do (the app's F8, F9 toggles).
        self.look.show_outside = getattr(self.app, "show_outside", True)
        self.look.show_ids = getattr(self.app, "show_ids", False)
        self.look.id_width = self.look.wanted_id_width(self.items)
        self.load_history()

    def on_resize(self, event: events.Resize) -> None:
        self._check_width()
        # A height change moves the end: the pane a row shorter (the input below grew a
        # line) leaves scroll_y where it was, and the last line out of view.
        self._follow()

    def _check_width(self) -> None:
        """Draw again at the width the lines have now (a resize; or a layout that changed
        the width with no Resize of its own, seen by render_line)."""
        width = self._content_width()
        if width != self._width and self.size.width:
            self._width = width
            self._render_all()
            self._follow()

    def set_rule(self, key: int | None, label: str) -> None:
        """Draw the window's rule before the item with this key (None: no rule).

        Called whenever the agent's context may have changed: the messages that left it
        (or came back, on /undo) are drawn again then.
        """
        changed = set(self.look.changed(self.items)) if self.size.width else set()
        if key != self.rule_key or label != self.rule_label or changed:
            self.rule_key, self.rule_label = key, label
            self._redraw(lambda index, _item: index in changed)

    def _redraw(self, pick: Callable[[int, Item], bool]) -> None:
        """Draw again the loaded items `pick(index, item)` chooses (those drawn already),
        keeping the view where it is (or at the end, when it follows it)."""
        anchor = None if self.following else self._anchor()
        self._strips = [self._draw_item(item) if strips and pick(index, item) else strips
                        for index, (item, strips) in enumerate(zip(self.items, self._strips))]
        self._rebuild()
        self._keep_in_place(anchor)
        self._follow()  # following: new lines must not push the end out of view

    def toggle_tools(self) -> None:
        self.expanded = not self.expanded
        self._redraw(lambda _index, i: i.kind in ("tool_call", "tool_result") or folds(i))

    def toggle(self, what: str, show: bool | None = None) -> bool:
        """Hide or show the messages out of the agent's context ("outside"), or show or
        hide each message's id ("ids"); whether they are shown now."""
        look = self.look
        if what == "ids":
            look.show_ids = not look.show_ids if show is None else show
            look.id_width = look.wanted_id_width(self.items)
            self._redraw(lambda _index, _item: True)
            return look.show_ids
        look.show_outside = not look.show_outside if show is None else show
        self._redraw(lambda _index, item: item.key in look.reasons)
        self._fill()
        return look.show_outside

    def add_items(self, items: list[Item]) -> None:
        """New items at the end of the log (shown only when the newest page is loaded);
        none the loaded page holds already (read while their message was on its way)."""
        if self.history is not None:
            self.history.add(i.key for i in items if i.key > 0)
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
