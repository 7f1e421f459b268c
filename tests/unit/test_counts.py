"""core/tokens/counts.py: the meter's compact id -> raw count table behaves as a dict would,
through merges of its latest counts and sorted blocks in any order, and stays compact."""

from __future__ import annotations

import sys
from array import array

from hypothesis import given, settings
from hypothesis import strategies as st

from ikigai_tui.core.tokens import counts as counts_module
from ikigai_tui.core.tokens.counts import Counts, merge_sorted, sorted_pairs

ids = st.integers(min_value=1, max_value=400)
values = st.floats(min_value=0, max_value=1e6, allow_nan=False)
ops = st.lists(st.one_of(
    st.tuples(st.just("set"), ids, values),
    st.tuples(st.just("default"), ids, values),
    st.tuples(st.just("update"), st.lists(st.tuples(ids, values), max_size=30)),
    st.tuples(st.just("block"), st.lists(st.tuples(ids, values), max_size=30)),
    st.tuples(st.just("merge"),),
), max_size=40)


@settings(max_examples=200, deadline=None)
@given(ops, st.lists(ids, max_size=60))
def test_counts_agree_with_a_dict(script, probes):
    counts_module_merge_at = counts_module.MERGE_AT
    counts_module.MERGE_AT = 7  # merges happen within a short script
    try:
        table, oracle = Counts(), {}
        for op in script:
            if op[0] == "set":
                table[op[1]] = op[2]
                oracle[op[1]] = op[2]
            elif op[0] == "default":
                assert table.setdefault(op[1], op[2]) == oracle.setdefault(op[1], op[2])
            elif op[0] == "update":
                table.update(op[1])
                oracle.update(op[1])
            elif op[0] == "block":
                table.add_sorted(*sorted_pairs(op[1]))
                oracle.update(op[1])
            else:
                table.merge()
        assert len(table) == len(oracle)
        for key in probes + sorted(oracle):
            assert table.get(key) == oracle.get(key)
            assert (key in table) == (key in oracle)
        walk = sorted(set(probes) | set(oracle))
        assert table.absent(walk) == [k for k in walk if k not in oracle]
        cursor = table.cursor()
        assert [cursor.get(k) for k in walk] == [oracle.get(k) for k in walk]
    finally:
        counts_module.MERGE_AT = counts_module_merge_at


def test_a_missing_key_raises_and_a_default_is_returned():
    table = Counts({5: 2.5})
    assert table[5] == 2.5
    assert table.get(6, 1.0) == 1.0
    try:
        table[6]
    except KeyError:
        pass
    else:
        raise AssertionError("a missing key must raise KeyError")


def test_merge_sorted_prefers_the_second_and_keeps_order():
    a = (array("q", [1, 3, 5]), array("d", [1.0, 3.0, 5.0]))
    b = (array("q", [2, 3, 9]), array("d", [20.0, 30.0, 90.0]))
    ids_, vals = merge_sorted(a, b)
    assert list(ids_) == [1, 2, 3, 5, 9]
    assert list(vals) == [1.0, 20.0, 30.0, 5.0, 90.0]


def test_a_hundred_thousand_counts_take_about_sixteen_bytes_each():
    table = Counts()
    table.update((i, float(i % 97)) for i in range(1000, 101_000))
    table.merge()
    arrays = table._arrays
    size = sys.getsizeof(arrays[0]) + sys.getsizeof(arrays[1]) + sys.getsizeof(table._new)
    assert size < 100_000 * 18, size  # a dict of floats: ~75 bytes a message
    assert table.get(50_000) == float(50_000 % 97)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(ids, values), max_size=60), st.lists(ids, max_size=40, unique=True))
def test_counts_held_by_a_fallback_are_pruned_from_the_table_and_still_found(pairs, context):
    table = Counts(pairs)
    table.merge()
    oracle = dict(pairs)
    context = sorted(context)
    held = [oracle.get(k, 1.5) for k in context]  # the meter's arrays hold their counts
    oracle.update(zip(context, held))
    before = table.table()
    table.fallback = (context, array("d", held))
    table.swap(before, table.pruned(before, context))
    assert not set(table.table()[0]) & set(context)  # held once
    for key in sorted(set(oracle) | {0, 401}):
        assert table.get(key) == oracle.get(key)
    cursor = table.cursor()
    walk = sorted(oracle)
    assert [cursor.get(k) for k in walk] == [oracle[k] for k in walk]
    assert table.pruned(table.table(), [3, 2]) is None  # not ascending: nothing pruned


def test_a_swap_after_the_table_changed_is_refused():
    table = Counts({1: 1.0, 2: 2.0})
    table.merge()
    before = table.table()
    pruned = table.pruned(before, [1])
    table.add_sorted(array("q", [3]), array("d", [3.0]))  # changed meanwhile
    table.swap(before, pruned)
    assert table.get(1) == 1.0 and table.get(3) == 3.0


def test_the_meter_holds_each_count_once():
    from ikigai_tui.core.replay.replayer import Replayer
    from tests.unit.window_helpers import LIMIT, fresh_meter

    rows = []
    for i in range(1, 301):
        rows.append((2 * i, "user", {"content": f"question {i}"}))
        rows.append((2 * i + 1, "assistant", {"content": f"answer {i} " * 5}))
    r = Replayer.from_rows(rows)
    first = fresh_meter()
    first.measure(r, [], 0, LIMIT)
    kept = list(zip(first.ids, first.sizes))
    meter = fresh_meter()  # as opening a log does: the kept counts read from the store
    meter.cache.add_sorted(*sorted_pairs(kept + [(9999, 7.0)]))
    window = meter.measure(r, [], 0, LIMIT)
    assert window.tokens == first.measure(r, [], 0, LIMIT).tokens
    assert list(meter.cache.table()[0]) == [9999]  # the context's counts: in the meter only
    assert meter.cache.get(2) == meter.sizes[0] and meter.cache.get(601) == meter.sizes[-1]
    assert meter.cache.get(9999) == 7.0
