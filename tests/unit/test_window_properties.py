"""The sliding window (SPEC §7), property tests: over generated conversations (system
prompt, pins, turns with tool exchanges) the ContextMeter agrees with an independent
oracle — pruning drops whole turns only, never splits a tool exchange, and fits unless
only the latest turn is left — and an incrementally updated meter always equals one built
from scratch, through marks, clears, rewinds, filters, compactions, undos and budget
changes.
"""

from __future__ import annotations

import json
import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ikigai_tui.core.replay.replayer import Replayer
from ikigai_tui.core.replay.request import build_messages, system_text
from ikigai_tui.core.tokens.counter import TokenCounter
from ikigai_tui.core.tools import tool_schemas
from tests.fakes.server import validate_pairs
from tests.unit.window_helpers import LIMIT, MODEL, fresh_meter

PURE = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# -- an independent oracle -------------------------------------------------------------------


def oracle(r: Replayer, tools: list, budget: int) -> tuple[list[int], int]:
    """(the context's messages in order, the index where the window must start): the
    first turn boundary from which the request fits, else the latest turn."""
    counter = TokenCounter(MODEL)
    ids = [k for k, e in r.ctx.items() if e[1] != "summary"]
    sizes = [counter.message(r.ctx[k][1], r.ctx[k][2]) for k in ids]
    summaries = sum(counter.message(e[1], e[2]) for e in r.ctx.values() if e[1] == "summary")
    fixed = counter.fixed(system_text(r), tools) + summaries
    boundaries = [0] + [i for i, k in enumerate(ids) if r.ctx[k][1] == "user" and i > 0]
    if budget <= 0 or not ids:
        return ids, 0
    for start in boundaries:
        if fixed + sum(sizes[start:]) <= budget:
            return ids, start
    return ids, boundaries[-1]


def check_pairs(r: Replayer, window: list[int]) -> None:
    inside = set(window)
    for k in window:
        kind, payload = r.ctx[k][1], r.ctx[k][2]
        if kind == "tool_call" and r.result_of.get(k) in r.ctx:
            assert r.result_of[k] in inside, f"call {k} in the window, its result not"
        if kind == "tool_result" and payload["call_event"] in r.ctx:
            assert payload["call_event"] in inside, f"result {k} in the window, its call not"


# -- generating conversations -------------------------------------------------------------


class Log:
    """Rows applied to a live Replayer as they are drawn."""

    def __init__(self) -> None:
        self.rows: list[tuple[int, str, dict]] = []
        self.r = Replayer()
        self.next_id = 1
        self.calls = 0

    def emit(self, kind: str, payload: dict) -> int:
        row = (self.next_id, kind, payload)
        self.next_id += 1
        self.rows.append(row)
        self.r.apply(row)
        return row[0]

    def text(self, draw) -> str:
        return "t" * draw(st.sampled_from([0, 3, 40, 200, 800, 3000]))

    def pair(self, draw) -> None:
        self.calls += 1
        cid = f"call_{self.calls}"
        call = self.emit("tool_call", {"call_id": cid, "name": "slash",
                                       "arguments": json.dumps({"command": "marks", "x": self.text(draw)})})
        self.emit("tool_result", {"call_id": cid, "call_event": call, "content": self.text(draw)})

    def turn(self, draw) -> None:
        self.emit("user", {"content": self.text(draw) or "hi"})
        for step in draw(st.lists(st.sampled_from(["assistant", "pair", "pairs"]), max_size=4)):
            if step == "assistant":
                self.emit("assistant", {"content": self.text(draw)})
            elif step == "pair":
                self.pair(draw)
            else:  # several calls in one round, then their results
                self.calls += 2
                a = self.emit("tool_call", {"call_id": f"call_{self.calls - 1}", "name": "slash",
                                            "arguments": "{}"})
                b = self.emit("tool_call", {"call_id": f"call_{self.calls}", "name": "slash",
                                            "arguments": "{}"})
                self.emit("tool_result", {"call_id": f"call_{self.calls - 1}", "call_event": a,
                                          "content": self.text(draw)})
                self.emit("tool_result", {"call_id": f"call_{self.calls}", "call_event": b,
                                          "content": self.text(draw)})


@st.composite
def conversations(draw) -> Log:
    log = Log()
    if draw(st.booleans()):
        log.emit("system", {"content": "s" * draw(st.integers(1, 2000))})
    for _ in range(draw(st.integers(0, 2))):
        log.emit("pin", {"text": "p" * draw(st.integers(1, 400))})
    for _ in range(draw(st.integers(0, 2))):  # a leading turn 0: no user message first
        if draw(st.booleans()):
            log.emit("assistant", {"content": log.text(draw)})
        else:
            log.pair(draw)
    for _ in range(draw(st.integers(0, 10))):
        log.turn(draw)
    return log


# -- pure properties ------------------------------------------------------------------------


@PURE
@given(log=conversations(), data=st.data())
def test_pruning_drops_whole_turns_only(log, data):
    r = log.r
    tools = data.draw(st.sampled_from([[], tool_schemas()]), label="tools")
    counter = TokenCounter(MODEL)
    total = counter.fixed(system_text(r), tools) + sum(
        counter.message(e[1], e[2]) for e in r.ctx.values())
    budget = data.draw(st.integers(0, math.ceil(total) + 200), label="budget")
    meter = fresh_meter()
    w = meter.measure(r, tools, budget, LIMIT)
    window = meter.window_ids()

    ids, start = oracle(r, tools, budget)
    assert list(meter.ids) == ids
    assert w.start_index == start
    assert window == ids[start:]
    assert w.start == (ids[start] if ids else None)
    # The window starts a turn (or is the whole context) ...
    assert start == 0 or r.ctx[ids[start]][1] == "user"
    # ... and never splits a tool exchange.
    check_pairs(r, window)
    assert validate_pairs({"messages": build_messages(r, window)}, "openai") == []
    # It fits, unless only the latest turn is left.
    users = [i for i, k in enumerate(ids) if r.ctx[k][1] == "user"]
    if budget > 0 and w.tokens > budget:
        assert users == [] or start == users[-1]
    if budget > 0 and start > 0:  # one turn more would not have fitted
        assert w.tokens + w.outside > budget
    window_raw = sum(counter.message(r.ctx[k][1], r.ctx[k][2]) for k in window)
    fixed_raw = counter.fixed(system_text(r), tools)
    assert w.tokens == math.ceil(fixed_raw + window_raw - 1e-9)
    # The rows are running totals scaled, so that they add up to the whole.
    assert w.window == w.tokens - math.ceil(fixed_raw - 1e-9)
    assert w.system + w.tools + w.summaries + w.window == w.tokens
    boundaries = [0] + [i for i in users if i > 0]
    assert w.pruned_turns == len([b for b in boundaries if b < start])


# -- incremental == from scratch -------------------------------------------------------------


@PURE
@given(data=st.data())
def test_incremental_window_equals_from_scratch(data):
    log = Log()
    draw = data.draw
    tools = draw(st.sampled_from([[], tool_schemas()]), label="tools")
    meter = fresh_meter()
    budget = draw(st.sampled_from([0, 300, 800, 1500, 4000]), label="budget")
    steps = draw(st.integers(1, 40), label="steps")
    for _ in range(steps):
        ops = ["turn", "turn", "user", "assistant", "pair", "mark", "clear", "budget"]
        if log.r.valid_marks():
            ops.append("rewind")
        if log.r.ctx:
            ops += ["forget", "remember", "compact"]
        if log.r.undo_target() is not None:
            ops += ["undo", "undo"]
        op = draw(st.sampled_from(ops), label="op")
        if op == "turn":
            log.turn(draw)
        elif op == "user":
            log.emit("user", {"content": log.text(draw) or "q"})
        elif op == "assistant":
            log.emit("assistant", {"content": log.text(draw)})
        elif op == "pair":
            log.pair(draw)
        elif op == "mark":
            log.emit("mark", {"name": draw(st.sampled_from(["A", "B", None]), label="name")})
        elif op == "clear":
            log.emit("clear", {})
        elif op == "rewind":
            mark = draw(st.sampled_from(log.r.valid_marks()), label="mark")
            log.emit("rewind", {"mark": mark.name, "mark_event": mark.event_id})
        elif op in ("forget", "remember", "compact"):
            ids = draw(st.lists(st.sampled_from(list(log.r.ctx)), min_size=1, unique=True),
                       label="ids")
            if op == "compact":
                log.emit("compact", {"ids": ids, "summary": "S" * draw(st.integers(0, 600))})
            else:
                log.emit("filter", {"mode": op, "ids": ids})
        elif op == "undo":
            log.emit("undo", {"target": log.r.undo_target()})
        elif op == "budget":
            budget = draw(st.sampled_from([0, 300, 800, 1500, 4000]), label="budget")
        if draw(st.integers(0, 3), label="measure?") or op == "budget":
            incremental = meter.measure(log.r, tools, budget, LIMIT)
            scratch_meter = fresh_meter()
            assert incremental == scratch_meter.measure(log.r, tools, budget, LIMIT), op
            assert meter.window_ids() == scratch_meter.window_ids()
    final = meter.measure(log.r, tools, budget, LIMIT)
    replayed = Replayer.from_rows(list(log.rows))
    scratch = fresh_meter()
    assert final == scratch.measure(replayed, tools, budget, LIMIT)
    assert meter.window_ids() == scratch.window_ids()
    ids, start = oracle(log.r, tools, budget)
    assert meter.window_ids() == ids[start:]
    check_pairs(log.r, meter.window_ids())
