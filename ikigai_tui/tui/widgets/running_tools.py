"""Tool calls running in the scrollback (a mixin of `Scrollback`).

A call runs while its agent's turn runs in this process and its result has not come: the
calls without a result after the turn's last message. Its one line says so, with the time
since it began and the key that stops it (`▸ bash make test · running 12s · Esc stops`).
One timer per pane redraws those lines about once a second, and only them (the item's
line made again and put in place; the rest of the transcript is not drawn); it stops when
none runs. When the result comes, the line is the usual finished one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from textual.timer import Timer

from ikigai_tui.tui.transcript import Item
from ikigai_tui.tui.widgets.context_look import key_names_of

if TYPE_CHECKING:
    from textual.strip import Strip

TICK = 1.0  # seconds between two redraws of the running lines
STOP_ID = "stop-reply"  # the binding that stops the turn (tui/bindings.py)
ENDS_RUN = ("user", "assistant", "error")  # calls before one of these are not running


def running_calls(items: Sequence[Item], pairs: dict[int, Item]) -> frozenset[int]:
    """The keys of the calls at the end of `items` whose result is not among `pairs`."""
    keys = []
    for item in reversed(items):
        if item.kind in ENDS_RUN:
            break
        if item.kind == "tool_call" and item.key > 0 and item.key not in pairs:
            keys.append(item.key)
    return frozenset(keys)


def busy_of(pages: object) -> Callable[[], bool] | None:
    """The pages' `busy` (AgentPages: the agent's turn runs here), if they have one."""
    while not hasattr(pages, "busy") and hasattr(pages, "__wrapped__"):
        pages = pages.__wrapped__  # a wrapper of the pages (tui/notes.py)
    return getattr(pages, "busy", None)


class RunningTools:
    """Running calls for `Scrollback`, which provides the attributes declared here."""

    items: list[Item]
    _strips: list[Sequence[Strip]]
    _starts: list[int]
    _pairs: dict[int, Item]
    _calls_running: frozenset[int]
    _ticker: Timer | None
    _agent_busy: Callable[[], bool] | None

    def _mark_running(self, items: Sequence[Item]) -> set[int]:
        """Which calls of `items` run now (the timer started or stopped to suit); the
        keys of those that began or stopped running since they were drawn."""
        busy = self._agent_busy
        running = running_calls(items, self._pairs) if busy is not None and busy() else frozenset()
        old, self._calls_running = self._calls_running, running
        if running and self._ticker is None and self.is_mounted:
            self._ticker = self.set_interval(TICK, self._tick, name="running tools")
        elif not running and self._ticker is not None:
            self._ticker.stop()
            self._ticker = None
        return set(old ^ running)

    def stop_key(self, item: Item) -> str | None:
        """For a running call, the key that stops it (its line shows it); else None."""
        if item.key not in self._calls_running:
            return None
        return key_names_of(self.app).get(STOP_ID, "Esc")

    def _tick(self) -> None:
        changed = self._mark_running(self.items)
        if changed:  # the turn ended without their results (a failure): drawn as they are
            self._redraw(lambda _index, item: item.key in changed)
        left = len(self._calls_running)
        for index in range(len(self.items) - 1, -1, -1):
            if left <= 0:
                break
            if self.items[index].key in self._calls_running:
                left -= 1
                self._redraw_line(index)

    def _redraw_line(self, index: int) -> None:
        """Draw one item again in place: only its lines are refreshed."""
        block = self._strips[index]
        if not isinstance(block, list) or not block or index >= len(self._starts):
            return  # hidden or not drawn yet
        new = self._draw_item(self.items[index])
        if not isinstance(new, list) or len(new) != len(block):
            self._redraw(lambda at, _item: at == index)
            return
        block[:] = new  # the laid-out lines hold this very list
        self.refresh_lines(self._starts[index], len(new))
