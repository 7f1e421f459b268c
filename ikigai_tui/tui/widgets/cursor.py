"""The cursor mode of a scrollback (F7, issue 27 item 4: act on any message): a
selected entry (a message, a tool call or result, a command line), moved with the
arrows, Home/End and PageUp/PageDown across the pages (an older page loads as the
cursor passes the first entry loaded), highlighted and kept in view, its id and what
can be done with it on a bar over the pane's last line. The keys of the actions
(bindings.py CURSOR) post a `CursorAct` that the app runs (tui/cursor_actions.py)."""

from __future__ import annotations

import asyncio

from textual import events
from textual.message import Message
from textual.strip import Strip
from rich.segment import Segment
from rich.style import Style

from ikigai_tui.tui.transcript import Item

ENTRY_KINDS = frozenset({"user", "assistant", "tool_call", "tool_result", "command", "mail"})
REPLY_KINDS = frozenset({"assistant", "tool_call", "tool_result"})
HIGHLIGHT = Style(bgcolor="grey30")
BAR = Style(reverse=True, bold=True)
PAGE = 10  # entries a PageUp / PageDown moves

# (what, key shown, label) of the actions, in the bar's and the menu's order.
ACTIONS = (("fork", "f", "fork"), ("mark", "m", "mark"), ("forget", "d", "forget"),
           ("pin", "p", "pin"), ("copy", "c", "copy"), ("view", "v", "view"),
           ("restore", "r", "restore"))


class CursorAct(Message):
    """Run `what` (an ACTIONS name, or "menu") on the entry `item` of `scrollback`."""

    def __init__(self, scrollback: object, what: str, item: Item) -> None:
        super().__init__()
        self.scrollback = scrollback
        self.what = what
        self.item = item


class CursorLines:
    """The Scrollback's cursor mode (a mixin: its attributes are the scrollback's)."""

    cursor: int | None = None  # the selected entry's key; None: not in the mode

    # -- the entries -------------------------------------------------------------

    def _entries(self) -> list[int]:
        """Indices of the loaded items the cursor can stop on: those drawn with lines."""
        items, starts = self.items, self._starts  # type: ignore[attr-defined]
        ends = [*starts[1:], len(self._lines)]  # type: ignore[attr-defined]
        return [i for i, item in enumerate(items)
                if item.key > 0 and item.kind in ENTRY_KINDS and i < len(starts)
                and ends[i] > starts[i]]

    def cursor_item(self) -> Item | None:
        return next((i for i in self.items if i.key == self.cursor), None)  # type: ignore[attr-defined]

    def in_context(self, item: Item) -> bool:
        return self.look.reason(item) is None and item.kind != "command"  # type: ignore[attr-defined]

    def exchange(self, item: Item) -> list[int]:
        """The ids of `item`'s exchange in the context: the user message and the replies,
        tool calls and results that answer it (of the loaded items)."""
        items = [i for i in self.items if i.key > 0 and i.kind in ENTRY_KINDS  # type: ignore[attr-defined]
                 and i.kind != "command" and self.look.reason(i) is None]  # type: ignore[attr-defined]
        at = next((n for n, i in enumerate(items) if i.key == item.key), None)
        if at is None:
            return []
        start = at
        while start > 0 and items[start].kind in REPLY_KINDS:
            start -= 1
        end = at + 1
        while end < len(items) and items[end].kind in REPLY_KINDS:
            end += 1
        return [i.key for i in items[start:end]]

    # -- entering, moving, leaving ----------------------------------------------

    def cursor_enter(self) -> bool:
        """Select the last entry in view (else the last loaded); whether there is one."""
        entries = self._entries()
        if not entries:
            return False
        bottom = int(self.scroll_y) + self.size.height  # type: ignore[attr-defined]
        shown = [i for i in entries if self._starts[i] < bottom]  # type: ignore[attr-defined]
        self._select((shown or entries)[-1])
        return True

    def cursor_leave(self) -> None:
        self.cursor = None
        self.refresh()  # type: ignore[attr-defined]

    async def cursor_move(self, how: str) -> None:
        entries = self._entries()
        if not entries:
            return
        keys = [self.items[i].key for i in entries]  # type: ignore[attr-defined]
        at = keys.index(self.cursor) if self.cursor in keys else len(keys) - 1
        step = {"up": -1, "down": 1, "page_up": -PAGE, "page_down": PAGE}.get(how, 0)
        if how == "home":
            await self.action_scroll_home()  # type: ignore[attr-defined]
            entries = self._entries()
            if entries:
                self._select(entries[0])
            return
        if how == "end":
            await self.action_scroll_end()  # type: ignore[attr-defined]
            entries = self._entries()
            if entries:
                self._select(entries[-1])
            return
        target = at + step
        if target < 0 and not self.at_start:  # type: ignore[attr-defined]
            await self._older()  # type: ignore[attr-defined]
            return await self._move_from(self.cursor, step)
        if target >= len(keys) and not self.at_end:  # type: ignore[attr-defined]
            await self._newer()  # type: ignore[attr-defined]
            return await self._move_from(self.cursor, step)
        self._select(entries[max(0, min(target, len(keys) - 1))])

    async def _move_from(self, key: int | None, step: int) -> None:
        """After a page loaded: `step` entries from the entry `key`, once it is drawn
        (a page is drawn in slices after the frame)."""
        for _ in range(200):
            if not self._undrawn:  # type: ignore[attr-defined]
                break
            await asyncio.sleep(0.01)
        entries = self._entries()
        keys = [self.items[i].key for i in entries]  # type: ignore[attr-defined]
        at = keys.index(key) if key in keys else 0
        if entries:
            self._select(entries[max(0, min(at + step, len(keys) - 1))])

    def _select(self, index: int) -> None:
        self.cursor = self.items[index].key  # type: ignore[attr-defined]
        self.following = False  # type: ignore[attr-defined]
        starts = self._starts  # type: ignore[attr-defined]
        top, height = int(self.scroll_y), max(1, self.size.height - 1)  # type: ignore[attr-defined]
        start = starts[index]
        end = starts[index + 1] if index + 1 < len(starts) else len(self._lines)  # type: ignore[attr-defined]
        if start < top or end - start > height:
            self.scroll_to(y=start, animate=False, immediate=True, force=True)  # type: ignore[attr-defined]
        elif end > top + height:
            self.scroll_to(y=end - height, animate=False, immediate=True, force=True)  # type: ignore[attr-defined]
        self.refresh()  # type: ignore[attr-defined]

    # -- keys -----------------------------------------------------------------

    async def _on_key(self, event: events.Key) -> None:
        """The mode's keys, before the scrollback's own bindings (up, down, home, end)."""
        if self.cursor is None or not await self._cursor_handled(event):
            await super()._on_key(event)  # type: ignore[misc]

    async def _cursor_handled(self, event: events.Key) -> bool:
        from ikigai_tui.tui.bindings import CURSOR

        keymap = getattr(self.app, "keymap", None) or {}  # type: ignore[attr-defined]
        for binding in CURSOR:
            keys = keymap.get(binding.id, binding.key) if binding.id else binding.key
            if event.key in keys.split(","):
                event.stop()
                event.prevent_default()
                await self._cursor_key(binding.action)
                return True
        return False

    async def _cursor_key(self, action: str) -> None:
        what = action.removeprefix("cursor_")
        if what in ("up", "down", "home", "end", "page_up", "page_down"):
            await self.cursor_move(what)
            return
        if what == "leave":
            self.post_message(CursorAct(self, "leave", Item(-1, "note", "")))  # type: ignore[attr-defined]
            return
        item = self.cursor_item()
        if item is not None:
            self.post_message(CursorAct(self, what, item))  # type: ignore[attr-defined]

    # -- drawing --------------------------------------------------------------

    def cursor_styled(self, strip: Strip, index: int, y: int, width: int) -> Strip:
        """The line `index` (shown at row y) as the mode shows it: highlighted in the
        selected entry; the bar on the last row."""
        if self.cursor is None:
            return strip
        if y == self.size.height - 1:  # type: ignore[attr-defined]
            return Strip([Segment(self.bar_text()[:width].ljust(width), BAR)])
        at = next((n for n, i in enumerate(self.items) if i.key == self.cursor), None)  # type: ignore[attr-defined]
        starts = self._starts  # type: ignore[attr-defined]
        if at is None or at >= len(starts):
            return strip
        end = starts[at + 1] if at + 1 < len(starts) else len(self._lines)  # type: ignore[attr-defined]
        return strip.apply_style(HIGHLIGHT) if starts[at] <= index < end else strip

    def bar_text(self) -> str:
        item = self.cursor_item()
        if item is None:
            return ""
        where = "in context" if self.in_context(item) else (
            "command line" if item.kind == "command" else "out of context")
        keys = "  ".join(f"{key} {label}" for what, key, label in ACTIONS
                         if what in applicable(self, item))
        return f" #{item.key} {item.kind} · {where} · {keys} · Enter more · Esc leave"


def applicable(scrollback: CursorLines, item: Item) -> list[str]:
    """The actions that apply to `item`: fork, mark and forget need it in the context,
    restore needs it out; a command line is copied or viewed only."""
    if item.kind == "command":
        return ["copy", "view"]
    inside = scrollback.in_context(item)
    return [what for what, _key, _label in ACTIONS
            if (what in ("fork", "mark", "forget") and inside) or what in ("pin", "copy", "view")
            or (what == "restore" and not inside)]
