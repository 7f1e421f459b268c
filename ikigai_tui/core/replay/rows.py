"""Compact storage for a replayed agent (core/replay/replayer.py): its history, and the kind codes
its context shares (the context itself: core/replay/context.py).

An agent of 100,000 messages held each message as an event tuple (64 bytes), its id as
an int object (32), a dict slot for the context (~50) and a list slot for the history
(8): ~150 bytes a message, most of what memory grew by with the log. Here the ids, seqs
and kinds are machine integers in arrays (`array('q')`, kinds as small codes), and a
payload is held only when it is not the empty outline of a plain message (`NO_BODY`:
a message's text stays in the log, core/replay/bodies.py): tool links, a failed flag, a
summary, and the payloads of the few non-message events. ~28 bytes a message.

`Rows` is the history (every event of the agent, in id order): a sequence of
`(id, kind, payload)` rows, made on demand.
"""

from __future__ import annotations

import threading
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import compress, count
from operator import not_
from typing import Any

from ikigai_tui.core.replay.bodies import NO_BODY, Entry
from ikigai_tui.core.events import MESSAGE_KINDS, METADATA_KINDS, EventRow

# Kind names by code; code 0 marks a removed context entry (a tombstone).
KIND_NAMES: list[str] = ["", *sorted(MESSAGE_KINDS | METADATA_KINDS | {"summary"})]
KIND_CODES: dict[str, int] = {name: code for code, name in enumerate(KIND_NAMES) if code}
_NEW_KIND = threading.Lock()  # replays run in worker threads
# Messages that replay only appends (no tool links): a run of them is copied at once.
PLAIN_CODES = frozenset(KIND_CODES[k] for k in ("user", "assistant"))
PLAIN_RUN = 32  # shorter runs are replayed row by row


def kind_code(kind: str) -> int:
    code = KIND_CODES.get(kind)
    if code is None:
        with _NEW_KIND:
            code = KIND_CODES.get(kind)
            if code is None:
                code = len(KIND_NAMES)
                KIND_NAMES.append(kind)
                KIND_CODES[kind] = code
    return code


def _sub_payloads(payloads: dict[int, Any], ids: array, contiguous: bool = True) -> dict[int, Any]:
    """The payloads of `ids` (ascending; `contiguous`: every id of the source between the
    first and the last): by range when there are fewer payloads."""
    if not payloads or not ids:
        return {}
    if contiguous and len(payloads) < len(ids):
        lo, hi = ids[0], ids[-1]
        return {k: v for k, v in payloads.items() if lo <= k <= hi}
    get = payloads.get
    return {k: p for k in ids if (p := get(k)) is not None}


class Rows(Sequence):
    """An agent's events in id order, as `(id, kind, payload)` rows made on demand."""

    __slots__ = ("ids", "kinds", "payloads")

    def __init__(self, rows: Iterable[EventRow] = ()) -> None:
        self.ids = array("q")
        self.kinds = array("H")
        self.payloads: dict[int, Any] = {}
        self.extend(rows)

    def append(self, row: EventRow) -> None:
        key, kind, payload = row
        self.ids.append(key)
        self.kinds.append(kind_code(kind))
        if payload is not NO_BODY:
            self.payloads[key] = payload

    def extend(self, rows: Iterable[EventRow]) -> None:
        ids, kinds, payloads, codes = self.ids, self.kinds, self.payloads, KIND_CODES
        for key, kind, payload in rows:
            ids.append(key)
            code = codes.get(kind)
            kinds.append(code if code is not None else kind_code(kind))
            if payload is not NO_BODY:
                payloads[key] = payload

    def extend_encoded(self, rows: Iterable[tuple[int, str, Any]], decode: Callable[[Any], Any],
                       plain_kinds: frozenset[str]) -> None:
        """Rows whose payloads are encoded (JSON, say), decoded by `decode`; the empty
        payload ("{}") of a kind in `plain_kinds` is NO_BODY, neither decoded nor kept."""
        ids, kinds, payloads, codes = self.ids, self.kinds, self.payloads, KIND_CODES
        for key, kind, encoded in rows:
            ids.append(key)
            code = codes.get(kind)
            kinds.append(code if code is not None else kind_code(kind))
            if encoded != "{}" or kind not in plain_kinds:
                payloads[key] = decode(encoded)

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            out = Rows()
            out.ids = self.ids[index]
            out.kinds = self.kinds[index]
            out.payloads = _sub_payloads(self.payloads, out.ids, index.step in (None, 1))
            return out
        key = self.ids[index]
        return (key, KIND_NAMES[self.kinds[index]], self.payloads.get(key, NO_BODY))

    def __iter__(self) -> Iterator[EventRow]:
        names, get = KIND_NAMES, self.payloads.get
        for key, code in zip(self.ids, self.kinds):
            yield (key, names[code], get(key, NO_BODY))

    def __reversed__(self) -> Iterator[EventRow]:
        names, get = KIND_NAMES, self.payloads.get
        for key, code in zip(reversed(self.ids), reversed(self.kinds)):
            yield (key, names[code], get(key, NO_BODY))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, (Rows, list, tuple)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]

    def position(self, key: int) -> int:
        """Where the event `key` is (or would be): a bisect of the ids."""
        return bisect_left(self.ids, key)

    def find(self, key: int) -> EventRow | None:
        """The event `key`, if this history has it (O(log n))."""
        i = bisect_left(self.ids, key)
        return self[i] if i < len(self.ids) and self.ids[i] == key else None

    def copy(self) -> Rows:
        return self[:]

    def of_kinds(self, codes: frozenset[int]) -> Iterator[EventRow]:
        """The rows whose kind code is one of `codes` (found in C: for a few kinds)."""
        for i in compress(count(), map(codes.__contains__, self.kinds)):
            yield self[i]

    def of_kind(self, kind: str) -> Iterator[EventRow]:
        """The rows of one kind, in order (found in C: no row of another kind is made)."""
        code = KIND_CODES.get(kind)
        return self.of_kinds(frozenset((code,))) if code is not None else iter(())

    def plain_runs(self, shortest: int | None = None) -> Iterator[tuple[int, int]]:
        """The runs [start, end) of plain messages (user, assistant) at least `shortest`
        long (PLAIN_RUN): those worth copying at once."""
        if shortest is None:
            shortest = PLAIN_RUN
        start = 0
        # The positions of the other rows, found in C.
        for i in compress(count(), map(not_, map(PLAIN_CODES.__contains__, self.kinds))):
            if i - start >= shortest:
                yield start, i
            start = i + 1
        if len(self.ids) - start >= shortest:
            yield start, len(self.ids)

    def run(self, start: int, end: int) -> tuple[array, array, dict[int, Any]]:
        """Rows[start:end] as arrays (ids, kind codes) and their payloads."""
        ids = self.ids[start:end]
        return ids, self.kinds[start:end], _sub_payloads(self.payloads, ids)

    def __repr__(self) -> str:
        return f"Rows({list(self)!r})"
