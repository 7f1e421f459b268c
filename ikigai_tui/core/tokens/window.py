"""The sliding window: whole turns leave the front of the context until the request fits.

The window start is a function of the context and the budget: the first turn from
which system + tools + pins + summaries + the rest of the context fit the budget, or
the latest turn, which always stays. Nothing is written to the log.

`ContextMeter` keeps it incrementally: per-message counts are cached by event id
(compactly: core/tokens/counts.py), a
message appended costs only itself, and pruning after a turn walks only the turns it
removes. Any other change to the context (clear, rewind, filter, undo, a new model or
a larger budget) recomputes from the start, which gives the same answer.
"""

from __future__ import annotations

from bisect import bisect_left
import asyncio
from array import array
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple
from itertools import accumulate, compress, count, islice
from math import ceil

from ikigai_tui.core.tokens.counts import Counts
from ikigai_tui.core.tokens.limits import usage_state
from ikigai_tui.core.replay.replayer import Replayer
from ikigai_tui.core.replay.context import Context
from ikigai_tui.core.replay.rows import KIND_CODES
from ikigai_tui.core.replay.request import system_text
from ikigai_tui.core.tokens.counter import Resize, TokenCounter

CONTEXT_FULL = "Context full. Use /clear to continue."
_new_window = tuple.__new__

SUMMARY, USER = KIND_CODES["summary"], KIND_CODES["user"]


class Window(NamedTuple):  # built on every measure: a tuple is the cheapest to make
    start: int | None  # id of the first message in the window; None when it is empty
    start_index: int  # its index among the context's messages (summaries excluded)
    tokens: int  # the whole request: fixed + summaries + window
    system: int  # system prompt and pins
    tools: int
    pins: int
    summaries: int
    window: int
    outside: int  # tokens of the pruned turns
    pruned_turns: int
    budget: int  # effective budget (0: the window is off)
    limit: int  # the model's input limit
    exact: bool
    # With summaries of pruned turns on (core/compaction/pruned.py): the share of the
    # budget kept for the summary (the window fits the budget minus it), and the summary
    # sent, if one stands: its tokens (counted in `tokens`) and the messages it covers.
    reserve: int = 0
    pruned_summary: int = 0
    pruned_covered: int = 0

    @property
    def percent(self) -> float:
        return 100.0 * self.tokens / self.limit if self.limit else 0.0

    @property
    def state(self) -> str:
        """normal / warning (>= 80%) / critical (>= 95%) / full (>= 100%) of the input limit."""
        return usage_state(self.tokens / self.limit if self.limit else 0.0)


class ContextMeter:
    """Token accounting and the sliding window of one agent, kept up to date cheaply."""

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self.cache = Counts()  # raw tokens per message id: messages never change
        self.unsaved: list[tuple[int, float]] = []  # counted here, not kept in the store yet
        self.filling: Any = None  # the lock of tokens/kept.py fill, made there
        self.ids = array("q")  # the context's messages in order (summaries apart)
        # Raw counts as float64 arrays, not lists of floats: 16 bytes a message, not 64.
        self.sizes = array("d")
        self.prefix = array("d", (0.0,))  # prefix[i]: raw tokens of ids[:i]
        self.turn_starts = array("q")  # indexes into ids where a user message starts a turn
        self.total = 0.0  # raw tokens of all messages in `ids`
        self.summaries = 0.0
        self.start = 0  # index of the first message in the window
        self.turn = 0  # index into turn_starts of the turn at `start` (-1: leading turn 0)
        self.outside = 0.0
        self._changes = -1
        self._stubs = False  # the fallback holds the stub counts of cleared tool results
        self._budget_raw = -1.0
        self._room = 0.0
        self._fixed_key: tuple = ()
        self._fixed_value = (0.0, 0.0, 0.0)

    # -- keeping up with the replayer -------------------------------------------

    def _size(self, key: int, entry: tuple) -> float:
        """The count of a context entry: cached, or counted (and then kept by the caller,
        in ids/sizes, the cache's fallback; a summary's in the cache)."""
        size = None if "cleared" in entry[2] else self.cache.get(key)
        if size is None:
            size = self.counter.message(entry[1], entry[2])
            if entry[1] == "summary":
                self.cache[key] = size
        return size

    def missing(self, r: Replayer) -> list[int]:
        """The context entries the next measure would count (no count cached): all of
        them when it recounts from the start, else only those appended since."""
        if r.changes != self._changes:
            return self.cache.absent(r.ctx)
        return self.appended_missing(r)

    def appended_missing(self, r: Replayer) -> list[int]:
        """`missing` when the next measure does not recount from the start."""
        new = len(r.ctx) - len(self.ids) - len(r.summaries)
        if new <= 0 or r.changes != self._changes:
            return []
        cache = self.cache
        return [k for k, _ in islice(reversed(r.ctx.items()), new) if k not in cache][::-1]

    def _rebuild(self, r: Replayer) -> None:
        self._install(self._tally(r.ctx, bool(r.cleared) or self._stubs), r.changes)

    async def rebuild_off_loop(self, r: Replayer) -> None:
        """The recount from the start that the next measure would do, in a worker thread
        over a copy of the context (100,000 messages: tens of ms the loop keeps). Kept
        unless the context changed other than by appends meanwhile (those are caught up).
        The copy is the context's arrays (no new objects: no collection runs)."""
        changes = r.changes
        ctx = r.ctx.copy()
        tally = await asyncio.to_thread(self._tally, ctx, bool(r.cleared) or self._stubs)
        if r.changes == changes:
            self._install(tally, changes)

    def _tally(self, ctx: Context, cleared: bool = False) -> tuple:
        cache = self.cache
        table = cache.table()  # read once: pruned below, swapped in by _install
        held = self.ids, self.sizes  # the counts of the context until now (the fallback)
        keys, kinds = ctx.columns()
        # A cleared tool result counts as its stub (and the fallback holds stubs' counts
        # while `_stubs`): counted one by one.
        sizes = cache.sizes_of(keys) if not cleared and not kinds.count(SUMMARY) else None
        whole: list[tuple[int, float]] = []
        if sizes is not None:  # every count at hand, no summary: in C (a log just opened)
            starts = array("q", compress(count(), map(USER.__eq__, kinds)))
            ids, summaries = keys, 0.0
        else:
            ids, sizes, starts, summaries, whole = self._tally_each(ctx.items())
        prefix = array("d", (0.0,))
        prefix.extend(accumulate(sizes))
        # The context's counts are held by ids/sizes from now on (the cache's fallback):
        # the cache keeps the others only, those of messages that left the context too
        # (an /undo brings them back counted).
        return (ids, sizes, starts, prefix, summaries, table, cache.rebased(table, held, ids),
                whole, cleared)

    def _tally_each(self, items: Iterable[tuple[int, tuple]]) -> tuple:
        """_tally's arrays, an entry at a time (counting those with no count)."""
        ids = array("q")
        sizes = array("d")
        starts = array("q")
        summaries = 0.0
        whole: list[tuple[int, float]] = []
        find, size_of = self.cache.cursor().get, self._size
        for key, entry in items:
            kind = entry[1]
            size = None
            if "cleared" in entry[2]:  # counted as its stub; its own count kept aside
                size = size_of(key, entry)
                own = find(key)
                if own is not None and own != size:
                    whole.append((key, own))
            else:
                size = find(key)
            if size is None:
                size = size_of(key, entry)
            if kind == "summary":
                summaries += size
                continue
            if kind == "user":
                starts.append(len(ids))
            ids.append(key)
            sizes.append(size)
        return ids, sizes, starts, summaries, whole

    def _install(self, tally: tuple, changes: int) -> None:
        (self.ids, self.sizes, self.turn_starts, self.prefix, self.summaries, table, pruned,
         whole, self._stubs) = tally
        self.cache.fallback = (self.ids, self.sizes)
        self.cache.swap(table, pruned)
        # A cleared tool result's own count stays in the table (the fallback has its
        # stub's): an /undo or /restore finds it counted whole.
        self.cache.update(whole)
        self.total = self.prefix[-1]
        self.start, self.outside = 0, 0.0
        self.turn = -1 if not self.turn_starts or self.turn_starts[0] > 0 else 0
        self._changes = changes

    def stale(self, r: Replayer) -> bool:
        """Whether the next measure recounts from the start."""
        return r.changes != self._changes

    def _append(self, key: int, entry: tuple) -> None:
        size = None if "cleared" in entry[2] else self.cache.get(key)
        kind = entry[1]
        if size is None:
            size = self.counter.message(kind, entry[2])
        ids = self.ids
        if kind == "user":
            if not ids and self.start == 0:
                self.turn = 0  # the context starts with a user message: no leading turn 0
            self.turn_starts.append(len(ids))
        ids.append(key)
        self.sizes.append(size)
        self.total = total = self.total + size
        self.prefix.append(total)

    def _catch_up(self, r: Replayer) -> None:
        if r.changes != self._changes:
            self._rebuild(r)
            return
        new = len(r.ctx) - len(self.ids) - len(r.summaries)
        if new == 1:  # the common case: one message appended
            key = next(reversed(r.ctx))
            self._append(key, r.ctx[key])
        elif new > 0:
            appended = list(islice(reversed(r.ctx.items()), new))
            for key, entry in reversed(appended):
                self._append(key, entry)

    # -- the window ---------------------------------------------------------------

    def _prune(self, fixed_raw: float, budget_raw: float) -> None:
        """Drop whole turns from the front while the request is over budget: the first
        turn after the current start from which it fits (a binary search over the
        prefix sums), else the latest turn, which always stays."""
        if budget_raw <= 0:
            return
        starts, prefix = self.turn_starts, self.prefix
        head = fixed_raw + self.summaries + self.total
        if head - self.outside <= budget_raw or self.turn + 1 >= len(starts):
            return
        turn = bisect_left(range(len(starts)), True, lo=self.turn + 1,
                           key=lambda t: head - prefix[starts[t]] <= budget_raw)
        turn = min(turn, len(starts) - 1)
        self.start, self.turn = starts[turn], turn
        self.outside = prefix[self.start]

    def measure(self, r: Replayer, tools: Sequence[dict], budget: int, limit: int,
                reserve: int = 0) -> Window:
        """`reserve`: tokens of the budget kept for a summary of the pruned turns; the
        window's messages fit the budget minus it."""
        counter = self.counter
        ctx = r.ctx
        if r.changes == self._changes and len(ctx) - len(self.ids) - len(r.summaries) == 1:
            key = next(reversed(ctx))  # _catch_up, inline: one message appended
            self._append(key, ctx[key])
        else:
            self._catch_up(r)
        pins = r.pins
        if (r.system, tuple(pins) if pins else (), id(tools), len(tools)) == self._fixed_key:
            system_raw, tools_raw, pins_raw = self._fixed_value  # _fixed, inline
        else:
            system_raw, tools_raw, pins_raw = self._fixed(r, tools)
        fixed_raw = system_raw + tools_raw
        f = counter.factor
        budget_raw = max(1, budget - reserve) / f if budget > 0 else 0.0
        room = budget_raw - fixed_raw
        if (room > self._room and self._budget_raw >= 0) or (budget_raw == 0) != (self._budget_raw == 0):
            # More room than before (a larger budget, fewer pins, a shorter system
            # prompt): the window may start earlier, which only a recount finds.
            self._rebuild(r)
        self._budget_raw, self._room = budget_raw, room
        if budget_raw > 0 and fixed_raw + self.summaries + self.total - self.outside > budget_raw:
            self._prune(fixed_raw, budget_raw)
        window_raw = self.total - self.outside
        start = self.start
        start_id = self.ids[start] if start < len(self.ids) else None
        summaries, outside = self.summaries, self.outside  # counter.scale, inline below
        # Made as a tuple (a Window built by keywords costs three times as much: it was
        # half of what measure costs after an append).
        # The parts are scaled as running totals, so that they add up to the whole (each
        # scaled alone and rounded up, they came to a token or two more).
        system = ceil(system_raw * f - 1e-9)
        tools = ceil(fixed_raw * f - 1e-9)
        sent = ceil((fixed_raw + summaries) * f - 1e-9)
        tokens = ceil((fixed_raw + summaries + window_raw) * f - 1e-9)
        return _new_window(Window, (
            start_id, start, tokens, system, tools - system,
            ceil(pins_raw * f - 1e-9) if pins_raw else 0,
            sent - tools, tokens - sent,
            ceil(outside * f - 1e-9) if outside else 0,
            self._pruned_turns() if start else 0, budget, limit, counter.exact,
            reserve if budget > 0 else 0, 0, 0))

    def _fixed(self, r: Replayer, tools: Sequence[dict]) -> tuple[float, float, float]:
        """System (with pins), tools and pins, recounted only when they change."""
        pins = r.pins
        key = (r.system, tuple(pins) if pins else (), id(tools), len(tools))
        if key != self._fixed_key:
            counter = self.counter
            system_raw = counter.fixed(system_text(r), ())
            tools_raw = counter.fixed("", tools) - counter.fixed("", ())
            pins_raw = counter.known_text("\n".join(r.pins)) if r.pins else 0.0
            self._fixed_key, self._fixed_value = key, (system_raw, tools_raw, pins_raw)
        return self._fixed_value

    def _pruned_turns(self) -> int:
        """Whole turns before the window: those starting before it, plus a leading turn 0
        (messages before the first user message) when there was one."""
        if self.start == 0:
            return 0
        leading = not self.turn_starts or self.turn_starts[0] > 0
        return bisect_left(self.turn_starts, self.start) + (1 if leading else 0)

    def raw_request(self, r: Replayer, tools: Sequence[dict]) -> float:
        """The unscaled estimate of the request the window makes (for learning the factor)."""
        system_raw, tools_raw, _ = self._fixed(r, tools)
        return system_raw + tools_raw + self.summaries + self.total - self.outside

    def resize(self, tokens: int) -> Resize:
        """For the request last measured, of `tokens` tokens: its size once messages
        leave or come back, as the measure after that change will say (while the window
        keeps them all: no turn pruned before or after)."""
        system_raw, tools_raw, _ = self._fixed_value
        raw = system_raw + tools_raw + self.summaries + self.total - self.outside
        return Resize(tokens, raw, self.counter.factor)

    def window_ids(self) -> list[int]:
        return list(self.ids[self.start :])
