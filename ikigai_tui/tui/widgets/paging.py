"""Loading the scrollback's pages: the latest, older and newer ones, the oldest.

A mixin of Scrollback (widgets/scrollback.py), which holds the loaded range and draws it;
this part decides what to read from the log and where the range goes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial

from ikigai_tui.core.ports import StoreError
from ikigai_tui.tui.messages import LogUnreadable
from ikigai_tui.tui.transcript import Item
from ikigai_tui.tui.widgets.history_bar import History

Page = Callable[..., Awaitable[list[Item]]]
PAGE_ITEMS = 40
EDGE = 2  # screens from an edge of the loaded range at which the next page is fetched
FILL_PAGES = 25  # older pages read in a row, at most, while what is shown fills no screen


class Paging:
    # Held by Scrollback (declared here for readers and type checkers).
    _pages: Page
    items: list[Item]
    at_start: bool
    at_end: bool
    following: bool
    loaded: bool
    _busy: bool

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
        if self.size.width:  # a jump to the end: what the view shows first
            self._draw_first(items, None)
        else:  # before the first layout: drawn by on_resize
            self._set_items(items)
        self.loaded = True
        if self.is_mounted:
            self._follow()
            self._fill()

    def _short(self) -> bool:
        """Messages are hidden and what is left does not fill the view and its margins."""
        return (not self.look.show_outside and not self.at_start and not self._busy
                and not self._undrawn  # a page being drawn: asked again once it is
                and 0 < len(self._lines) < (EDGE + 1) * self.size.height)

    def _fill(self) -> None:
        """When the loaded range does not fill the view (its messages hidden), read older
        pages until it does, FILL_PAGES at most: scrolling up could not ask for them."""
        if self._short():
            # The method, not a coroutine: a worker cancelled before it starts (exclusive)
            # then leaves no coroutine never awaited.
            self.read_in_worker(partial(self._older, FILL_PAGES), "page")

    async def _older(self, fill: int = 0) -> None:
        if self._busy or self.at_start or not self.items:
            return
        self._busy = True
        try:
            items = await self._pages(before=self._first_key(), limit=PAGE_ITEMS)
            self.at_start = len(items) < PAGE_ITEMS
            if not items:
                return
            self._add_undrawn(items, "start")
        finally:
            self._busy = False
        if fill > 1 and self._short():
            await self._older(fill - 1)

    async def _newer(self) -> None:
        if self._busy or self.at_end or not self.items:
            return
        self._busy = True
        try:
            items = await self._pages(after=self._last_key(), limit=PAGE_ITEMS)
            self.at_end = len(items) < PAGE_ITEMS
            if items:
                self._add_undrawn(items, "end")
        finally:
            self._busy = False

    def _first_key(self) -> int:
        return next((i.key for i in self.items if i.key > 0), 0)

    def _last_key(self) -> int:
        return next((i.key for i in reversed(self.items) if i.key > 0), 0)

    def _stop_paging(self) -> None:
        """A jump replaces the loaded range: a page still being read for the old one must
        not be joined to it."""
        if self.is_mounted:
            self.workers.cancel_group(self, "page")

    async def action_scroll_home(self) -> None:
        self._stop_paging()
        items = await self._pages(oldest=True, limit=PAGE_ITEMS)
        self.at_start, self.at_end = True, len(items) < PAGE_ITEMS
        self.following = False
        self._show_at(items, 0)
        self.scroll_to(y=0, animate=False, immediate=True, force=True)

    async def jump_to(self, key: int) -> bool:
        """Show the item with this key (or the first after it) at the top of the view, its
        page read around it; whether there was one. The view stops following the end."""
        self._stop_paging()
        half = PAGE_ITEMS // 2
        before = await self._pages(before=key, limit=half)
        after = await self._pages(after=key - 1, limit=PAGE_ITEMS - len(before))
        if not after:
            return False
        self.at_start = len(before) < half
        self.at_end = len(after) < PAGE_ITEMS - len(before)
        self.following = False
        self._show_at(before + after, len(before))
        return True

    def jump_to_ratio(self, ratio: float, room: float) -> None:
        """Show the part of the history `ratio` of the way down (0: the start, 1: the end),
        `room` the entries over which the top of the view can move; the newest request
        wins (a drag asks many times)."""
        history = self.history
        if history is None or not len(history):
            return
        if ratio >= 1.0:
            job = self.action_scroll_end
        elif ratio <= 0.0:
            job = self.action_scroll_home
        else:
            job = partial(self.jump_to, history.key_at(round(ratio * room)))
        self.read_in_worker(job, "jump")

    def load_history(self) -> None:
        """Read the key of every entry (for the scrollbar), in a worker."""
        pages = self._pages
        while not hasattr(pages, "history_keys") and hasattr(pages, "__wrapped__"):
            pages = pages.__wrapped__  # a wrapper of the pages (tui/notes.py)
        if hasattr(pages, "history_keys"):
            self.read_in_worker(partial(self._load_history, pages.history_keys), "history")

    def read_in_worker(self, job: Callable[[], Awaitable[object]], group: str) -> None:
        """Run a read of the log in an exclusive worker of `group`; damage it meets goes to
        the app (LogUnreadable), never a traceback. `job` is a method, not a coroutine:
        a worker cancelled before it starts then leaves no coroutine never awaited."""

        async def read() -> None:
            try:
                await job()
            except StoreError as exc:
                self.post_message(LogUnreadable(exc))

        self.run_worker(read, group=group, exclusive=True)

    async def _load_history(self, read) -> None:
        keys = await read()
        history = History(keys)
        if self.items:  # entries that arrived meanwhile
            history.add(i.key for i in self.items if i.key > 0)
        self.history = history
        self._refresh_history_bar()

    def _refresh_history_bar(self) -> None:
        if self._vertical_scrollbar is not None:
            self._vertical_scrollbar.refresh()

    def _show_at(self, items: list[Item], at: int) -> None:
        """Show `items` with item `at` at the top of the view: drawn first, the rest after."""
        if not self.size.width:
            self._set_items(items, keep="start")
            return
        self._draw_first(items, at)
        if self._starts:
            self.scroll_to(y=self._starts[min(at, len(self._starts) - 1)], animate=False,
                           immediate=True, force=True)

    async def action_scroll_end(self) -> None:
        self.following = True
        if not self.at_end:
            self._stop_paging()
            await self.load_latest()
        else:
            self._follow()

