"""The compact storage of a replayed agent (core/replay/rows.py).

1. `Context` answers as the insertion-ordered dict it replaced, kept in seq order,
   under any sequence of appends, in-place changes, deletes, pops, sorted inserts and
   replacements (checked against a plain list model after every step).
2. `Rows` is the list of rows it replaced: indexes, slices, reversal, find.
3. A replay that copies runs of plain messages at once (even runs of one) leaves the
   state that replaying them one by one leaves.
4. Memory: an agent of plain messages, and a fork's snapshot of it, cost tens of bytes
   a message, not ~150.
"""

from __future__ import annotations

import tracemalloc
from bisect import bisect_right

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ikigai_tui.core.replay import rows as replay_rows
from ikigai_tui.core.replay.bodies import NO_BODY
from ikigai_tui.core.replay.replayer import Replayer
from ikigai_tui.core.replay.context import Context
from ikigai_tui.core.replay.rows import Rows
from tests.unit.test_replay_properties import Builder, draw_base, state

KINDS = ["user", "assistant", "tool_call", "tool_result", "summary"]


class Model:
    """The reference: a list of (key, entry) in seq order, as the dict was."""

    def __init__(self) -> None:
        self.items: list[tuple[int, tuple]] = []

    def keys(self) -> list[int]:
        return [k for k, _ in self.items]

    def index(self, key: int) -> int:
        return self.keys().index(key)

    def put(self, key: int, entry: tuple) -> None:
        if key in self.keys():
            i = self.index(key)
            if self.items[i][1][0] == entry[0]:
                self.items[i] = (key, entry)
                return
            del self.items[i]
        seqs = [e[0] for _, e in self.items]
        self.items.insert(bisect_right(seqs, entry[0]), (key, entry))


def check(ctx: Context, model: Model) -> None:
    assert list(ctx.items()) == model.items
    assert list(ctx) == model.keys()
    assert list(reversed(ctx)) == model.keys()[::-1]
    assert list(reversed(ctx.items())) == model.items[::-1]
    assert list(ctx.values()) == [e for _, e in model.items]
    assert len(ctx) == len(model.items) and bool(ctx) == bool(model.items)
    for key, entry in model.items:
        assert key in ctx and ctx[key] == entry and ctx.get(key) == entry
    assert ctx.key_array().tolist() == model.keys()
    assert dict(ctx.copy().items()) == dict(model.items)
    for absent in (0, -1, 10 ** 9, None, "x"):
        assert absent not in ctx


@st.composite
def programs(draw):
    return draw(st.lists(st.tuples(st.sampled_from(
        ["append", "append", "append", "set", "del", "pop", "insert", "replace", "many"]),
        st.integers(0, 10 ** 6), st.sampled_from(KINDS)), max_size=60))


@settings(max_examples=150, deadline=None)
@given(programs())
def test_context_answers_as_the_dict_it_replaced(program):
    ctx, model = Context(), Model()
    next_key = 1
    for op, n, kind in program:
        keys = model.keys()
        payload = NO_BODY if n % 3 else {"n": n}
        if op == "append":
            next_key += 1 + n % 3
            ctx.append(next_key, next_key, kind, payload)
            model.put(next_key, (next_key, kind, payload))
        elif op == "set" and keys:
            key = keys[n % len(keys)]
            seq = ctx[key][0]
            ctx[key] = (seq, kind, payload)
            model.put(key, (seq, kind, payload))
        elif op == "del" and keys:
            key = keys[n % len(keys)]
            del ctx[key]
            del model.items[model.index(key)]
        elif op == "pop" and keys:
            assert ctx.popitem() == model.items.pop()
        elif op == "insert":  # a restore: keys gone before come back at their place
            gone = [k for k in range(1, next_key + 1) if k not in keys][: 1 + n % 80]
            pairs = [(k, (k, kind, payload)) for k in gone]
            ctx.insert_sorted(pairs)
            for k, e in pairs:
                model.put(k, e)
        elif op == "replace" and keys:  # a compact: a summary at its first message's place
            key = keys[n % len(keys)]
            next_key += 1
            entry = (ctx[key][0], "summary", {"content": str(n)})
            ctx.replace(key, next_key + 10 ** 7, entry)
            model.items[model.index(key)] = (next_key + 10 ** 7, entry)
        elif op == "many" and keys:  # a forget: many deletes, tombstones swept
            for key in keys[:: 1 + n % 3]:
                del ctx[key]
                del model.items[model.index(key)]
        check(ctx, model)


def test_context_mutation_checks():
    ctx = Context()
    ctx.append(5, 5, "user", NO_BODY)
    with pytest.raises(KeyError):
        del ctx[6]
    with pytest.raises(KeyError):
        ctx.replace(6, 7, (6, "summary", {}))
    with pytest.raises(ValueError):
        ctx.replace(5, 7, (4, "summary", {}))  # not the same seq
    ctx.popitem()
    with pytest.raises(KeyError):
        ctx.popitem()


def test_rows_answer_as_the_list_they_replaced():
    rows = [(i, "user" if i % 2 else "mark", NO_BODY if i % 3 else {"i": i})
            for i in range(2, 200, 3)]
    compact = Rows(rows)
    assert compact == rows and list(compact) == rows and len(compact) == len(rows)
    assert list(reversed(compact)) == rows[::-1]
    assert compact[5] == rows[5] and compact[-1] == rows[-1]
    assert compact[10:20] == rows[10:20] and compact[:0] == []
    assert isinstance(compact[3:], Rows) and compact[3:].find(rows[3][0]) == rows[3]
    assert compact.find(rows[7][0]) == rows[7] and compact.find(3) is None
    assert compact.position(rows[7][0]) == 7 and compact.position(10 ** 6) == len(rows)
    copy = compact.copy()
    copy.append((1000, "user", NO_BODY))
    assert len(compact) == len(rows) and copy[-1] == (1000, "user", NO_BODY)
    assert len(compact.payloads) == len([r for r in rows if r[2] is not NO_BODY])


def test_an_agent_of_plain_messages_costs_tens_of_bytes_a_message():
    n = 100_000
    rows = Rows((i, "user" if i % 2 else "assistant", NO_BODY) for i in range(1, n + 1))
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        r = Replayer.from_rows(rows)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(r.ctx) == n and r.history is rows
    # The dict of event tuples it replaced held ~150 bytes a message (entry tuple, id
    # object, dict slot, list slot); the arrays of the context hold ~18.
    assert held / n < 40, f"{held / n:.0f} bytes a message"


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_copying_runs_of_messages_replays_as_row_by_row(data):
    base, start = draw_base(data)
    b = Builder(data, start=start, base=base)
    b.run(max_steps=40)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(replay_rows, "PLAIN_RUN", 1)
        copied = Replayer.from_rows(list(b.rows), base)
    assert state(copied) == state(b.live)
    patch_free = Replayer.from_rows(list(b.rows), base)
    assert state(patch_free) == state(b.live)


def test_a_fork_snapshot_holds_arrays_too():
    n = 100_000
    rows = Rows((i, "user" if i % 2 else "assistant", NO_BODY) for i in range(1, n + 1))
    r = Replayer.from_rows(rows)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        whole, after_mark = r.snapshot(), r.snapshot(after_mark=n // 2)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    # A tuple of (key, entry) pairs held ~120 bytes a message more than the context.
    assert held / (n + n // 2) < 30, f"{held / (n + n // 2):.0f} bytes a message"
    assert list(whole.entries) == list(r.ctx.items()) and len(after_mark.entries) == n // 2
    assert whole == r.snapshot() and whole != after_mark
    child = Replayer(after_mark)
    child.apply((n + 1, "user", NO_BODY))
    assert list(child.ctx)[0] == n // 2 + 1 and len(child.ctx) == n // 2 + 1
    assert len(after_mark.entries) == n // 2  # the child's changes stay its own
    assert child.message_row(n // 2 + 1) == (n // 2 + 1, "user", NO_BODY)


def test_rows_slices_with_a_step():
    rows = [(i, "mark", {"i": i}) for i in range(1, 50)]
    compact = Rows(rows)
    assert compact[::-1] == rows[::-1] and compact[::3] == rows[::3]
    assert compact[::3].payloads == {r[0]: r[2] for r in rows[::3]}


@settings(max_examples=100, deadline=None)
@given(programs(), st.integers(0, 200))
def test_a_context_tail_after_a_seq(program, seq):
    ctx = Context()
    next_key = 1
    for op, n, kind in program:
        keys = list(ctx)
        if op in ("append", "insert", "set"):
            next_key += 1 + n % 3
            ctx.append(next_key, next_key, kind, NO_BODY if n % 2 else {"n": n})
        elif op == "replace" and keys:
            key = keys[n % len(keys)]
            next_key += 1
            ctx.replace(key, 10 ** 7 + next_key, (ctx[key][0], "summary", {"s": n}))
        elif op in ("del", "many") and keys:
            del ctx[keys[n % len(keys)]]
    tail = ctx.after(seq)
    expected = [(k, e) for k, e in ctx.items() if e[0] > seq]
    assert list(tail.items()) == expected
    assert all(k in tail for k, _ in expected) and len(tail) == len(expected)
    assert list(ctx.after(None).items()) == list(ctx.items())


@settings(max_examples=100, deadline=None)
@given(programs(), st.integers(0, 200))
def test_cutting_a_context_after_a_seq(program, seq):
    ctx = Context()
    next_key = 1
    for op, n, kind in program:
        keys = list(ctx)
        if op in ("append", "insert", "set"):
            next_key += 1 + n % 3
            ctx.append(next_key, next_key, kind, NO_BODY if n % 2 else {"n": n})
        elif op == "replace" and keys:
            key = keys[n % len(keys)]
            next_key += 1
            ctx.replace(key, 10 ** 7 + next_key, (ctx[key][0], "summary", {"s": n}))
        elif op in ("del", "many") and keys:
            del ctx[keys[n % len(keys)]]
    before = list(ctx.items())
    keys, codes, payloads = ctx.cut_after(seq)
    gone = [(k, e) for k, e in before if e[0] > seq]
    assert list(ctx.items()) == [(k, e) for k, e in before if e[0] <= seq]
    assert list(keys) == [k for k, _ in gone]
    assert [replay_rows.KIND_NAMES[c] for c in codes] == [e[1] for _, e in gone]
    assert payloads == {k: e[2] for k, e in gone if e[2] is not NO_BODY}
    assert all(k not in ctx for k, _ in gone) and len(ctx) == len(before) - len(gone)


def test_rows_of_a_kind():
    rows = [(i, ("user", "usage", "mark")[i % 3], NO_BODY if i % 3 == 0 else {"i": i})
            for i in range(1, 30)]
    compact = Rows(rows)
    assert list(compact.of_kind("usage")) == [r for r in rows if r[1] == "usage"]
    assert list(compact[10:].of_kind("mark")) == [r for r in rows[10:] if r[1] == "mark"]
    assert list(compact.of_kind("never-seen")) == []
