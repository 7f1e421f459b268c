"""Raw token counts by message id, compact: 16 bytes a message instead of ~75.

A meter keeps the count of every message of its context (messages never change, so a
count is good forever). A dict of id -> float costs a dict slot and a float object per
message (~75 bytes); at 100,000 messages that is most of what the meter holds. `Counts`
keeps them in two sorted arrays (int64 ids, float64 counts), plus a small dict of the
latest ones merged into the arrays once it grows. Lookups bisect the arrays; a walk over
ids in ascending order (a context, in log order) uses `Cursor`, which looks at the next
slot first, so a whole context is looked up in O(n).

A meter's own arrays (its context's ids, ascending, and their counts) are a second
source (`fallback`): once a recount has put the counts of the context there, they are
dropped from the table (`prune`), so a count is held once, not twice.

It answers the part of the Mapping protocol callers use: `get`, `in`, `[]`, `[]=`,
`setdefault`, `update`, truth.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterable, Mapping, Sequence
from itertools import islice
from operator import lt

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


def prune(arrays: tuple[array, array], drop: Sequence[int]) -> tuple[array, array]:
    """`arrays` without the ids in `drop` (ascending)."""
    ids, vals = arrays
    if not ids or not drop:
        return arrays
    if len(ids) == len(drop) and ids == _int64(drop):  # all of them (compared in C)
        return array("q"), array("d")
    kept_ids, kept_vals = array("q"), array("d")
    j, m = 0, len(drop)
    for i, key in enumerate(ids):
        while j < m and drop[j] < key:
            j += 1
        if j < m and drop[j] == key:
            continue
        kept_ids.append(key)
        kept_vals.append(vals[i])
    return kept_ids, kept_vals


def _int64(ids: Sequence[int]) -> array:
    return ids if isinstance(ids, array) and ids.typecode == "q" else array("q", ids)


def ascending(ids: Sequence[int]) -> bool:
    return all(map(lt, ids, islice(ids, 1, None)))  # in C: 100,000 ids in ~3 ms


class Counts:
    __slots__ = ("_arrays", "_new", "fallback")

    def __init__(self, pairs: Iterable[tuple[int, float]] | Mapping[int, float] = ()) -> None:
        # One attribute for both arrays: swapped at once, so a reader in another thread
        # never sees the ids of one merge with the counts of another.
        self._arrays: tuple[array, array] = (array("q"), array("d"))
        self._new: dict[int, float] = {}
        # (ids ascending, counts): a meter's context, looked up after the table.
        self.fallback: tuple[Sequence[int], Sequence[float]] = ((), ())
        self.update(pairs)

    def __bool__(self) -> bool:
        return bool(self._new or self._arrays[0] or self.fallback[0])

    def __len__(self) -> int:  # the ids with a count (a slow walk: for tests)
        return len(set(self._new) | set(self._arrays[0]) | set(self.fallback[0]))

    def _find(self, key: int) -> float | None:
        for ids, vals in (self._arrays, self.fallback):
            if ids and ids[-1] >= key:  # a new message's id is past them all: no search
                i = bisect_left(ids, key)
                if ids[i] == key:
                    return vals[i]
        return None

    def get(self, key: int, default: float | None = None) -> float | None:
        value = self._new.get(key)
        if value is not None:
            return value
        ids, vals = self._arrays  # _find, inline: a meter looks up each message appended
        if ids and ids[-1] >= key:
            i = bisect_left(ids, key)
            if ids[i] == key:
                return vals[i]
        ids, vals = self.fallback
        if ids and ids[-1] >= key:
            i = bisect_left(ids, key)
            if ids[i] == key:
                return vals[i]
        return default

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

    def table(self) -> tuple[array, array]:
        """The sorted arrays as they are now (the latest counts not merged in)."""
        return self._arrays

    def pruned(self, arrays: tuple[array, array], ids: Sequence[int]) -> tuple[array, array] | None:
        """`arrays` (the table's, as read earlier) without `ids` (ascending), or None when
        `ids` do not ascend. Runs anywhere (a thread); `swap` puts the result in."""
        return prune(arrays, ids) if ascending(ids) else None

    def rebased(self, arrays: tuple[array, array], held: tuple[Sequence[int], Sequence[float]],
                ids: Sequence[int]) -> tuple[array, array] | None:
        """The table for a new fallback: `arrays` (the table's, as read earlier) with the
        counts `held` by the old fallback, without the new fallback's `ids`. None: keep
        the table as it is (ids not ascending). Runs anywhere; `swap` puts it in."""
        old_ids, old_vals = held
        n = min(len(old_ids), len(old_vals))  # appends meanwhile (on the loop)
        if n and ascending(old_ids[:n]):
            arrays = merge_sorted((array("q", old_ids[:n]), array("d", old_vals[:n])), arrays)
        if not ascending(ids):
            return arrays
        return prune(arrays, ids)

    def swap(self, old: tuple[array, array], new: tuple[array, array] | None) -> None:
        """The table's arrays replaced by `new`, unless they changed since `old` was read."""
        if new is not None and self._arrays is old:
            self._arrays = new

    def sizes_of(self, keys: Iterable[int]) -> array | None:
        """The counts of `keys` as a float64 array (a copy), found in C when the table or
        the fallback holds exactly these ids; else None (look them up one by one)."""
        if self._new or not isinstance(keys, Sequence):
            return None
        for ids, vals in (self._arrays, self.fallback):
            if len(ids) == len(keys) and len(vals) == len(ids) and ids and \
                    _int64(ids) == _int64(keys):
                return array("d", vals)
        return None

    def cursor(self) -> Cursor:
        return Cursor(self)

    def absent(self, keys: Iterable[int]) -> list[int]:
        """The `keys` with no count, in their order (O(n) when they ascend; in C when
        none has one, or when the table holds exactly them: a log just opened)."""
        if not self:
            return list(keys)
        if self.sizes_of(keys) is not None:
            return []
        find = self.cursor().get
        return [k for k in keys if find(k) is None]


class Cursor:
    """Lookups of ids mostly in ascending order: the slot after the last hit is tried first,
    in the table and in the fallback."""

    __slots__ = ("_new", "_sources", "_at")

    def __init__(self, counts: Counts) -> None:
        self._new = counts._new
        self._sources = (counts._arrays, counts.fallback)
        self._at = [0, 0]

    def get(self, key: int) -> float | None:
        value = self._new.get(key)
        if value is not None:
            return value
        at = self._at
        for n, (ids, vals) in enumerate(self._sources):
            i = at[n]
            if i < len(ids) and ids[i] == key:
                at[n] = i + 1
                return vals[i]
            i = bisect_left(ids, key)
            if i < len(ids) and ids[i] == key:
                at[n] = i + 1
                return vals[i]
        return None
