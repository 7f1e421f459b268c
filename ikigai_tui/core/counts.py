"""Raw token counts by message id, compact: 16 bytes a message instead of ~75.

A meter keeps the count of every message of its context (messages never change, so a
count is good forever). A dict of id -> float costs a dict slot and a float object per
message (~75 bytes); at 100,000 messages that is most of what the meter holds. `Counts`
keeps them in two sorted arrays (int64 ids, float64 counts), plus a small dict of the
latest ones merged into the arrays once it grows. Lookups bisect the arrays; a walk over
ids in ascending order (a context, in log order) uses `Cursor`, which looks at the next
slot first, so a whole context is looked up in O(n).

It answers the part of the Mapping protocol callers use: `get`, `in`, `[]`, `[]=`,
`setdefault`, `update`, `len`.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterable, Mapping

MERGE_AT = 4096  # the latest counts are merged into the arrays once this many wait


def merge_sorted(a: tuple[array, array], b: tuple[array, array]) -> tuple[array, array]:
    """Two sorted (ids, counts) pairs as one; `b`'s count wins for an id in both."""
    a_ids, a_vals = a
    b_ids, b_vals = b
    if not b_ids:
        return a
    if not a_ids or a_ids[-1] < b_ids[0]:  # the common case: newer ids after older
        return a_ids + b_ids, a_vals + b_vals
    ids, vals = array("q"), array("d")
    i = j = 0
    n, m = len(a_ids), len(b_ids)
    while i < n and j < m:
        x, y = a_ids[i], b_ids[j]
        if x < y:
            ids.append(x)
            vals.append(a_vals[i])
            i += 1
        else:
            ids.append(y)
            vals.append(b_vals[j])
            j += 1
            if x == y:
                i += 1
    ids.extend(a_ids[i:])
    vals.extend(a_vals[i:])
    ids.extend(b_ids[j:])
    vals.extend(b_vals[j:])
    return ids, vals


def sorted_pairs(pairs: Iterable[tuple[int, float]]) -> tuple[array, array]:
    """(ids, counts) arrays of `pairs`, sorted by id, one per id (the last given wins)."""
    latest = dict(pairs)
    ids = array("q", sorted(latest))
    return ids, array("d", (latest[i] for i in ids))


class Counts:
    __slots__ = ("_arrays", "_new")

    def __init__(self, pairs: Iterable[tuple[int, float]] | Mapping[int, float] = ()) -> None:
        # One attribute for both arrays: swapped at once, so a reader in another thread
        # never sees the ids of one merge with the counts of another.
        self._arrays: tuple[array, array] = (array("q"), array("d"))
        self._new: dict[int, float] = {}
        self.update(pairs)

    def __len__(self) -> int:
        ids, _ = self._arrays
        new = self._new
        return len(ids) + sum(1 for k in new if self._find(k) is None)

    def _find(self, key: int) -> float | None:
        ids, vals = self._arrays
        i = bisect_left(ids, key)
        if i < len(ids) and ids[i] == key:
            return vals[i]
        return None

    def get(self, key: int, default: float | None = None) -> float | None:
        value = self._new.get(key)
        if value is None:
            value = self._find(key)
        return default if value is None else value

    def __contains__(self, key: object) -> bool:
        return isinstance(key, int) and self.get(key) is not None

    def __getitem__(self, key: int) -> float:
        value = self.get(key)
        if value is None:
            raise KeyError(key)
        return value

    def __setitem__(self, key: int, value: float) -> None:
        self._new[key] = value
        if len(self._new) >= MERGE_AT:
            self.merge()

    def setdefault(self, key: int, value: float) -> float:
        found = self.get(key)
        if found is None:
            self[key] = value
            return value
        return found

    def update(self, pairs: Iterable[tuple[int, float]] | Mapping[int, float]) -> None:
        items = pairs.items() if isinstance(pairs, Mapping) else pairs
        self._new.update(items)
        if len(self._new) >= MERGE_AT:
            self.merge()

    def add_sorted(self, ids: array, vals: array) -> None:
        """Counts already sorted by id (a block read from the store), merged in."""
        self.merge()
        self._arrays = merge_sorted(self._arrays, (ids, vals))

    def merge(self) -> None:
        """The latest counts into the arrays."""
        if self._new:
            new, self._new = self._new, {}
            self._arrays = merge_sorted(self._arrays, sorted_pairs(new.items()))

    def cursor(self) -> Cursor:
        return Cursor(self)

    def absent(self, keys: Iterable[int]) -> list[int]:
        """The `keys` with no count, in their order (O(n) when they ascend)."""
        find = self.cursor().get
        return [k for k in keys if find(k) is None]


class Cursor:
    """Lookups of ids mostly in ascending order: the slot after the last hit is tried first."""

    __slots__ = ("_ids", "_vals", "_new", "_at")

    def __init__(self, counts: Counts) -> None:
        self._ids, self._vals = counts._arrays
        self._new = counts._new
        self._at = 0

    def get(self, key: int) -> float | None:
        value = self._new.get(key)
        if value is not None:
            return value
        ids, at = self._ids, self._at
        if at < len(ids) and ids[at] == key:
            self._at = at + 1
            return self._vals[at]
        at = bisect_left(ids, key)
        if at < len(ids) and ids[at] == key:
            self._at = at + 1
            return self._vals[at]
        return None
