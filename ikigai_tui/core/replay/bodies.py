"""Message bodies on demand: an agent's replayed state holds outlines, the store the text.

A replayed context needs only the shape of each message (id, kind, the tool-call links,
the failed flag); its text (`content`, a tool call's `arguments`) stays in the log and
is read when something needs it: the request of a turn (its window only), the token
counts of messages not counted yet, `context --json`, the matchers, a preview. So an
agent's memory grows by ~200 bytes a message, not by its text (2 KiB a message on
average in the benchmark logs).

`outline(kind, payload)` is what the replay keeps of a message; `Bodies` reads the rest
through the port (`EventLog.payloads`, batched), with a cache of the latest bodies
bounded by bytes (least recently used first out). Bulk reads (a whole context) go past
the cache, so one /remember never evicts the window every request needs.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

from ikigai_tui.core.events import CONTEXT_MESSAGE_KINDS, EventRow

if TYPE_CHECKING:
    from ikigai_tui.core.ports import EventLog

Entry = tuple[int, str, Any]  # a context entry: (seq, kind, payload: an outline or whole)


class Replayed(Protocol):
    """What reading bodies needs of a replayed agent (core/replay/replayer.py's Replayer): its
    context, and what it inherited at fork (`entries`, `result_of`)."""

    @property
    def ctx(self) -> Mapping[int, Entry]: ...

    @property
    def base(self) -> Any: ...

BODY_KEYS = ("content", "arguments")  # what the outline leaves in the log
NO_BODY: Mapping[str, Any] = MappingProxyType({})  # the outline of a plain message
CACHE_BYTES = 16 << 20
BATCH = 2000  # bodies read at once


def outline(kind: str, payload: dict) -> Mapping[str, Any]:
    """What the replay keeps of a message's payload: all but its text."""
    if kind not in CONTEXT_MESSAGE_KINDS:
        return payload
    if len(payload) == 1 and "content" in payload:
        return NO_BODY
    rest = {k: v for k, v in payload.items() if k not in BODY_KEYS}
    return rest or NO_BODY


def outline_row(row: EventRow) -> EventRow:
    kind = row[1]
    if kind == "pruned_summary" and "summary" in row[2]:
        # One after every turn once the window prunes: its text is read on demand too.
        return (row[0], kind, {k: v for k, v in row[2].items() if k != "summary"})
    if kind not in CONTEXT_MESSAGE_KINDS:
        return row
    return (row[0], kind, outline(kind, row[2]))  # type: ignore[return-value]


def needs_body(kind: str, payload: Mapping[str, Any]) -> bool:
    return kind in CONTEXT_MESSAGE_KINDS and "content" not in payload and "arguments" not in payload


def _size(payload: Mapping[str, Any]) -> int:
    return 200 + sum(len(v) for k in BODY_KEYS if isinstance(v := payload.get(k), str))


class Bodies:
    """Message payloads by event id, read from the log in batches, the latest cached."""

    def __init__(self, store: EventLog, limit: int = CACHE_BYTES) -> None:
        self.store = store
        self.limit = limit
        self.used = 0
        self._cache: OrderedDict[int, tuple[dict, int]] = OrderedDict()

    def put(self, event_id: int, payload: dict) -> None:
        """A payload known already (a message just committed): cached, most recent."""
        if event_id in self._cache:
            self._cache.move_to_end(event_id)
            return
        size = _size(payload)
        if size > self.limit:
            return
        self._cache[event_id] = (payload, size)
        self.used += size
        while self.used > self.limit:
            _key, (_payload, old) = self._cache.popitem(last=False)
            self.used -= old

    async def get(self, ids: Iterable[int], *, cache: bool = True) -> dict[int, dict]:
        """The payloads of `ids` (those still in the log)."""
        found: dict[int, dict] = {}
        missing: list[int] = []
        for i in ids:
            hit = self._cache.get(i)
            if hit is None:
                missing.append(i)
            else:
                self._cache.move_to_end(i)
                found[i] = hit[0]
        for start in range(0, len(missing), BATCH):
            read = await self.store.payloads(missing[start:start + BATCH])
            found.update(read)
            if cache:
                for i, payload in read.items():
                    self.put(i, payload)
        return found

    async def entries(self, replayer: Replayed, keys: Sequence[int], *,
                      cache: bool = True) -> dict[int, Entry]:
        """The context entries of `keys` with their whole payloads (as the log has them,
        with what the replay added: a failed turn's flag)."""
        ctx = replayer.ctx
        present = [k for k in keys if k in ctx]
        wanted = [k for k in present if needs_body(ctx[k][1], ctx[k][2])]
        bodies = await self.get(wanted, cache=cache) if wanted else {}
        out: dict[int, Entry] = {}
        for k in present:
            seq, kind, payload = ctx[k]
            body = bodies.get(k)
            out[k] = (seq, kind, {**body, **payload} if body is not None else payload)
        return out

    async def chunks(self, replayer: Replayed, keys: Sequence[int],
                     size: int = BATCH) -> AsyncIterator[dict[int, Entry]]:
        """`entries` of many keys, a batch at a time, past the cache (a whole context)."""
        for start in range(0, len(keys), size):
            yield await self.entries(replayer, keys[start:start + size], cache=False)

    async def inherited(self, replayer: Replayed) -> list[tuple[int, str, dict]]:
        """What the agent inherited at fork (its parent's context then), whole, in order:
        the scrollback's first part and what `export` counts. A tool call still running
        in the parent at fork (its result came after) was never sent to the child: left
        out."""
        base = replayer.base
        answered = set(base.result_of)
        bodies = await self.get([k for k, e in base.entries if needs_body(e[1], e[2])], cache=False)
        out: list[tuple[int, str, dict]] = []
        for key, (_seq, kind, payload) in base.entries:
            if kind == "tool_call" and key not in answered:
                continue
            body = bodies.get(key)  # an outline: its text is in the log
            out.append((key, kind, {**body, **payload} if body is not None else payload))
        return out

    async def messages(self, replayer: Replayed) -> list[tuple[int, str, dict]]:
        """`replayer.messages()` with every payload whole: the context in order, as the
        log has it (a whole context's text: for exports, tests, `context --json`)."""
        out: list[tuple[int, str, dict]] = []
        async for full in self.chunks(replayer, list(replayer.ctx)):
            out.extend((k, e[1], e[2]) for k, e in full.items())
        return out
