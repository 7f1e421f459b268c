"""The context of a replayed agent (core/replay/replayer.py), compact: a mutable mapping
`key -> (seq, kind, payload)` kept in seq order, in parallel arrays (ids and seqs as
int64, kinds as the codes of core/replay/rows.py; a payload held only when it is not
NO_BODY), ~18 bytes a message where the dict it replaces held ~130.

It has the operations of that dict: append O(1), pop from the tail O(1), a lookup
O(log n) (O(1) when keys are looked up in order), a delete O(log n) that leaves a
tombstone, swept once they outnumber the living; a rewind cuts the tail at once.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, MutableMapping
from heapq import merge
from itertools import compress
from typing import Any

from ikigai_tui.core.replay.bodies import NO_BODY
from ikigai_tui.core.replay.rows import KIND_CODES, KIND_NAMES, Entry, kind_code


class Context(MutableMapping):
    """`key -> (seq, kind, payload)` in seq order, in parallel arrays (module docstring).

    A message's key is its seq; a summary's seq is that of the first message it
    replaced (`odd` holds the seqs that differ from their keys: few)."""

    __slots__ = ("_keys", "_seqs", "_kinds", "_payloads", "_odd", "_live", "_hint")

    def __init__(self, items: Iterable[tuple[int, Entry]] = ()) -> None:
        self._keys = array("q")
        self._seqs = array("q")
        self._kinds = array("H")  # 0: removed
        self._payloads: dict[int, Any] = {}
        self._odd: dict[int, int] = {}
        self._live = 0
        self._hint = 0  # where the latest lookup hit: in-order walks look there first
        for key, entry in items:
            self[key] = entry

    # -- reading -------------------------------------------------------------------

    def _find(self, key: object) -> int:
        """The position of the live entry `key`, or -1."""
        keys, kinds = self._keys, self._kinds
        n = len(keys)
        h = self._hint
        if h < n and keys[h] == key and kinds[h]:
            return h
        h += 1
        if h < n and keys[h] == key and kinds[h]:
            self._hint = h
            return h
        if not isinstance(key, int):
            return -1
        seq = self._odd.get(key, key)
        seqs = self._seqs
        p = bisect_left(seqs, seq)
        while p < n and seqs[p] == seq:
            if keys[p] == key and kinds[p]:
                self._hint = p
                return p
            p += 1
        return -1

    def _entry(self, p: int) -> Entry:
        key = self._keys[p]
        return (self._seqs[p], KIND_NAMES[self._kinds[p]], self._payloads.get(key, NO_BODY))

    def __getitem__(self, key: int) -> Entry:
        p = self._find(key)
        if p < 0:
            raise KeyError(key)
        return self._entry(p)

    def get(self, key: int, default: Any = None) -> Any:  # type: ignore[override]
        p = self._find(key)
        return default if p < 0 else self._entry(p)

    def __contains__(self, key: object) -> bool:
        return self._find(key) >= 0

    def __len__(self) -> int:
        return self._live

    def __bool__(self) -> bool:
        return self._live > 0

    def __iter__(self) -> Iterator[int]:
        return compress(self._keys, self._kinds)

    def __reversed__(self) -> Iterator[int]:
        return compress(reversed(self._keys), reversed(self._kinds))

    def _walk(self, backwards: bool = False) -> Iterator[tuple[int, Entry]]:
        names, get = KIND_NAMES, self._payloads.get
        keys, seqs, kinds = self._keys, self._seqs, self._kinds
        if backwards:
            keys, seqs, kinds = reversed(keys), reversed(seqs), reversed(kinds)  # type: ignore[assignment]
        for key, seq, code in zip(keys, seqs, kinds):
            if code:
                yield key, (seq, names[code], get(key, NO_BODY))

    def keys(self) -> _View:  # type: ignore[override]
        return _View(self, 0)

    def values(self) -> _View:  # type: ignore[override]
        return _View(self, 1)

    def items(self) -> _View:  # type: ignore[override]
        return _View(self, 2)

    def last_seq(self) -> int | None:
        """The seq of the last entry (None when empty)."""
        return self._seqs[-1] if self._live else None

    def keys_of_kind(self, kind: str) -> list[int]:
        """The keys of the entries of one kind (found in C: for a rare kind)."""
        code = KIND_CODES.get(kind)
        if code is None:
            return []
        return list(compress(self._keys, map(code.__eq__, self._kinds)))

    def columns(self) -> tuple[array, array]:
        """The keys (int64) and kind codes (KIND_CODES) of the entries in order, as arrays
        (copies, made in C: a whole context's in a few ms)."""
        kinds = self._kinds
        return array("q", compress(self._keys, kinds)), array("H", compress(kinds, kinds))

    def key_array(self) -> array:
        """The keys in order, as an int64 array (a copy)."""
        return array("q", compress(self._keys, self._kinds))

    def copy(self) -> Context:
        return self.after(None)

    def after(self, seq: int | None) -> Context:
        """A copy of the entries whose seq is past `seq` (all of them for None): a tail,
        since the entries are in seq order; O(n) in C. Changes nothing here (a fork's
        snapshot is copied by several threads at once)."""
        start = 0 if seq is None else bisect_right(self._seqs, seq)
        out = Context()
        keys, seqs, kinds = self._keys[start:], self._seqs[start:], self._kinds[start:]
        if kinds.count(0):  # tombstones: left behind
            keys, seqs, kinds = (array("q", compress(keys, kinds)), array("q", compress(seqs, kinds)),
                                 array("H", compress(kinds, kinds)))
        out._keys, out._seqs, out._kinds = keys, seqs, kinds
        out._live = len(keys)
        if start == 0:
            out._payloads, out._odd = dict(self._payloads), dict(self._odd)
        else:
            kept = set(out._keys)
            out._payloads = {k: p for k, p in self._payloads.items() if k in kept}
            out._odd = {k: s for k, s in self._odd.items() if k in kept}
        return out

    def __repr__(self) -> str:
        return f"Context({dict(self.items())!r})"

    # -- changing ------------------------------------------------------------------

    def extend(self, keys: array, codes: array, payloads: dict[int, Any]) -> bool:
        """Messages appended at once (a run of a history, `Rows.run`: keys ascending,
        each its own seq). False, and nothing done, unless they all come after the
        context's last entry."""
        if not keys or (self._seqs and keys[0] <= self._seqs[-1]):
            return False
        self._keys.extend(keys)
        self._seqs.extend(keys)
        self._kinds.extend(codes)
        self._payloads.update(payloads)
        self._live += len(keys)
        return True

    def append_many(self, keys: list[int], codes: list[int], payloads: dict[int, Any]) -> None:
        """Messages appended in order (`keys` ascending, each its own seq; `codes` their
        kind codes; `payloads` those that are not NO_BODY): at once when they all come
        after the last entry."""
        seqs = self._seqs
        if seqs and keys[0] <= seqs[-1]:
            for key, code in zip(keys, codes):
                self.append(key, key, KIND_NAMES[code], payloads.get(key, NO_BODY))
            return
        self._keys.extend(keys)
        seqs.extend(keys)
        self._kinds.extend(codes)
        self._payloads.update(payloads)
        self._live += len(keys)

    def append(self, key: int, seq: int, kind: str, payload: Any) -> None:
        """A new entry at the end (the common case: a message just committed)."""
        seqs = self._seqs
        if seqs and seq <= seqs[-1]:  # not past every entry: the general path
            self[key] = (seq, kind, payload)
        else:
            self._push(key, seq, kind, payload)

    def _push(self, key: int, seq: int, kind: str, payload: Any) -> None:
        self._keys.append(key)
        self._seqs.append(seq)
        code = KIND_CODES.get(kind)
        self._kinds.append(code if code is not None else kind_code(kind))
        if payload is not NO_BODY:
            self._payloads[key] = payload
        if seq != key:
            self._odd[key] = seq
        self._live += 1

    def __setitem__(self, key: int, entry: Entry) -> None:
        seq, kind, payload = entry
        p = self._find(key)
        if p >= 0 and self._seqs[p] == seq:  # in place
            self._kinds[p] = kind_code(kind)
            if payload is NO_BODY:
                self._payloads.pop(key, None)
            else:
                self._payloads[key] = payload
            return
        if p >= 0:
            del self[key]
        seqs = self._seqs
        if not seqs or seq >= seqs[-1]:
            self._push(key, seq, kind, payload)
            return
        at = bisect_right(seqs, seq)  # in seq order, after the entries of the same seq
        self._keys.insert(at, key)
        seqs.insert(at, seq)
        self._kinds.insert(at, kind_code(kind))
        if payload is not NO_BODY:
            self._payloads[key] = payload
        if seq != key:
            self._odd[key] = seq
        self._live += 1

    def insert_sorted(self, pairs: list[tuple[int, Entry]]) -> None:
        """New entries (`pairs`, in seq order) each at its place in seq order, after
        those of the same seq: one by one when few (an array insert is a memmove), else
        in one merge (O(n))."""
        if len(pairs) <= 64 or not self._live or pairs[0][1][0] >= self._seqs[-1]:
            for key, entry in pairs:
                self[key] = entry
            return
        items = list(self._walk())
        self.clear()
        for key, entry in merge(items, pairs, key=_seq_of):
            self[key] = entry

    def replace(self, old: int, new: int, entry: Entry) -> None:
        """The entry `old` replaced in its place by `new` (a summary, say): same seq."""
        p = self._find(old)
        if p < 0:
            raise KeyError(old)
        seq, kind, payload = entry
        if seq != self._seqs[p] or new in self:
            raise ValueError(f"cannot put {new} at {old}'s place")
        self._payloads.pop(old, None)
        self._odd.pop(old, None)
        self._keys[p] = new
        self._kinds[p] = kind_code(kind)
        if payload is not NO_BODY:
            self._payloads[new] = payload
        if seq != new:
            self._odd[new] = seq

    def position(self, key: int) -> int:
        """Where the entry `key` is among the slots (-1: not in the context); only good
        to order entries until the next change."""
        return self._find(key)

    def __delitem__(self, key: int) -> None:
        p = self._find(key)
        if p < 0:
            raise KeyError(key)
        self._kinds[p] = 0
        self._payloads.pop(key, None)
        self._odd.pop(key, None)
        self._live -= 1
        self._trim()
        dead = len(self._keys) - self._live
        if dead > 64 and dead > self._live:
            self._sweep()

    def cut_after(self, seq: int) -> tuple[array, array, dict[int, Any]]:
        """The entries whose seq is past `seq` taken out (a tail, since the entries are in
        seq order; O(removed), mostly in C): their keys, kind codes and payloads."""
        at = bisect_right(self._seqs, seq)
        kinds = self._kinds[at:]
        keys = array("q", compress(self._keys[at:], kinds))
        codes = array("H", compress(kinds, kinds))
        del self._keys[at:], self._seqs[at:], self._kinds[at:]
        self._live -= len(keys)
        self._trim()
        payloads: dict[int, Any] = {}
        if self._payloads:
            pop = self._payloads.pop
            payloads = {k: p for k in keys if (p := pop(k, None)) is not None}
        if self._odd:
            for key in keys:
                self._odd.pop(key, None)
        return keys, codes, payloads

    def popitem(self) -> tuple[int, Entry]:
        """The last entry, taken out."""
        self._trim()
        if not self._keys:
            raise KeyError("popitem(): context is empty")
        key, seq, code = self._keys.pop(), self._seqs.pop(), self._kinds.pop()
        payload = self._payloads.pop(key, NO_BODY)
        self._odd.pop(key, None)
        self._live -= 1
        self._trim()
        return key, (seq, KIND_NAMES[code], payload)

    def clear(self) -> None:
        self._keys, self._seqs, self._kinds = array("q"), array("q"), array("H")
        self._payloads.clear()
        self._odd.clear()
        self._live = 0
        self._hint = 0

    def _trim(self) -> None:
        """Tombstones at the tail dropped: the last slot is always a live entry."""
        kinds = self._kinds
        while kinds and not kinds[-1]:
            kinds.pop()
            self._keys.pop()
            self._seqs.pop()

    def _sweep(self) -> None:
        """Tombstones dropped (O(n) in C): once they outnumber the living."""
        kinds = self._kinds
        if len(kinds) == self._live:
            return
        self._keys = array("q", compress(self._keys, kinds))
        self._seqs = array("q", compress(self._seqs, kinds))
        self._kinds = array("H", compress(kinds, kinds))
        self._hint = 0


class _View:
    """keys(), values() or items() of a Context: sized, iterable both ways."""

    __slots__ = ("_ctx", "_what")

    def __init__(self, ctx: Context, what: int) -> None:
        self._ctx, self._what = ctx, what

    def __len__(self) -> int:
        return len(self._ctx)

    def _pick(self, pairs: Iterator[tuple[int, Entry]]) -> Iterator:
        if self._what == 2:
            return pairs
        return (pair[self._what] for pair in pairs)

    def __iter__(self) -> Iterator:
        if self._what == 0:
            return iter(self._ctx)
        return self._pick(self._ctx._walk())

    def __reversed__(self) -> Iterator:
        if self._what == 0:
            return reversed(self._ctx)
        return self._pick(self._ctx._walk(backwards=True))

    def __contains__(self, item: object) -> bool:
        if self._what == 0:
            return item in self._ctx
        if self._what == 2:
            if not isinstance(item, tuple) or len(item) != 2:
                return False
            found = self._ctx.get(item[0], _MISSING)
            return found is not _MISSING and found == item[1]
        return any(v == item for v in self)


_MISSING = object()


def _seq_of(item: tuple[int, Entry]) -> int:
    return item[1][0]
