"""Opening a log whose counts were kept takes paths done in C (issue 23, item 17): the
kept blocks holding exactly the wanted ids, a table holding exactly a context's ids, a
recount from the start with every count at hand. Each must give what the walk, an id
at a time, gives: these properties compare them on random cases, and check that the
fast path was the one taken where it applies."""

from __future__ import annotations

from array import array

from hypothesis import given, settings
from hypothesis import strategies as st

from ikigai_tui.core.tokens.counts import Counts, prune, sorted_pairs
from ikigai_tui.core.replay.replayer import Replayer
from ikigai_tui.core.tokens.kept import pack, unpack
from tests.unit.window_helpers import LIMIT, fresh_meter

ids = st.integers(min_value=1, max_value=300)
values = st.floats(min_value=0, max_value=1e6, allow_nan=False)
pairs = st.lists(st.tuples(ids, values), max_size=80)


@settings(max_examples=200, deadline=None)
@given(pairs, st.lists(ids, max_size=80, unique=True), st.booleans(), st.booleans())
def test_absent_and_sizes_of_agree_with_a_dict(kept, others, exactly, as_fallback):
    oracle = dict(kept)
    table = Counts()
    keys = sorted(oracle) if exactly else sorted(set(others))
    if as_fallback:  # a meter's arrays: the context's ids and counts
        table.fallback = (array("q", sorted(oracle)), array("d", (oracle[k] for k in sorted(oracle))))
    else:
        table.add_sorted(*sorted_pairs(kept))
    assert table.absent(keys) == [k for k in keys if k not in oracle]
    sizes = table.sizes_of(keys)
    if sizes is not None:
        assert list(sizes) == [oracle[k] for k in keys]
    if exactly and oracle:
        assert sizes is not None  # found in C
    assert Counts().absent(keys) == keys


@settings(max_examples=150, deadline=None)
@given(pairs, st.lists(ids, max_size=80, unique=True), st.booleans())
def test_prune_of_every_id_and_of_some_agree_with_a_filter(kept, drop, every):
    arrays = sorted_pairs(kept)
    drop = list(arrays[0]) if every else sorted(drop)
    got = prune(arrays, drop)
    want = [(i, v) for i, v in zip(*arrays) if i not in set(drop)]
    assert list(zip(*got)) == want


@settings(max_examples=150, deadline=None)
@given(pairs, st.integers(min_value=1, max_value=40), st.lists(ids, max_size=60, unique=True),
       st.booleans())
def test_unpack_gives_the_wanted_counts_whether_the_blocks_hold_just_them_or_more(
        kept, block, others, exactly):
    latest = dict(kept)
    order = sorted(latest)
    blocks = [pack([(i, latest[i]) for i in order[n:n + block]]) for n in range(0, len(order), block)]
    wanted = order if exactly else sorted(set(others))
    found_ids, found_counts = unpack(blocks, wanted)
    assert list(zip(found_ids, found_counts)) == [(i, latest[i]) for i in wanted if i in latest]


def _rows(turns: list[tuple[int, int]], summary_after: int | None) -> list:
    rows, n = [], 1
    for question, answer in turns:
        rows.append((n, "user", {"content": "q" * question}))
        rows.append((n + 1, "assistant", {"content": "a " * answer}))
        n += 2
    if summary_after is not None and n > 3:
        upto = min(summary_after * 2 + 1, n - 1)
        rows.append((n, "compact", {"ids": list(range(1, upto)), "summary": "so far " * 9}))
    return rows


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 300), st.integers(0, 300)), min_size=1, max_size=40),
       st.one_of(st.none(), st.integers(1, 20)), st.integers(200, 20_000))
def test_a_meter_opened_with_kept_counts_measures_what_one_counting_them_does(
        turns, summary_after, budget):
    r = Replayer.from_rows(_rows(turns, summary_after))
    counting = fresh_meter()
    first = counting.measure(r, [], budget, LIMIT)
    kept = [(k, s) for k, s in zip(counting.ids, counting.sizes)]
    opened = fresh_meter()  # as opening a log does: its kept counts read back
    opened.cache.add_sorted(*sorted_pairs(kept))
    if not r.summaries:  # every count at hand and no summary: the tally is made in C

        def one_by_one(_items):
            raise AssertionError("the context was tallied an entry at a time")

        opened._tally_each = one_by_one
    again = opened.measure(r, [], budget, LIMIT)
    assert again == first
    assert list(opened.ids) == list(counting.ids)
    assert list(opened.sizes) == list(counting.sizes)
    assert list(opened.turn_starts) == list(counting.turn_starts)
    assert list(opened.prefix) == list(counting.prefix)
