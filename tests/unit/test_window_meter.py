"""The sliding window and the gauge (SPEC §7) on hand-built contexts: the latest turn
survives alone over budget, the window fits after pruning, a budget of 0 keeps
everything, a larger budget or a smaller fixed part (/unpin, a shorter system prompt)
lets the window grow back, an empty context, and the normal/warning/critical/full
thresholds of the gauge.
"""

from __future__ import annotations

import math

import pytest

from ikigai_tui.core.replay.replayer import Replayer
from ikigai_tui.core.tools import tool_schemas
from ikigai_tui.core.tokens.window import Window
from tests.unit.window_helpers import LIMIT, fresh_meter


# -- pruning --------------------------------------------------------------------------------


def _turns(sizes: list[int]) -> Replayer:
    rows, n = [], 1
    for size in sizes:
        rows.append((n, "user", {"content": "u" * size}))
        rows.append((n + 1, "tool_call", {"call_id": f"c{n}", "name": "slash", "arguments": "{}"}))
        rows.append((n + 2, "tool_result", {"call_id": f"c{n}", "call_event": n + 1,
                                            "content": "r" * size}))
        rows.append((n + 3, "assistant", {"content": "a" * size}))
        n += 4
    return Replayer.from_rows(rows)


def test_latest_turn_survives_alone_even_over_budget():
    r = _turns([400, 400, 400, 40_000])
    meter = fresh_meter()
    w = meter.measure(r, tool_schemas(), 500, LIMIT)
    assert meter.window_ids() == [13, 14, 15, 16]
    assert w.start == 13 and w.start_index == 12 and w.pruned_turns == 3
    assert w.tokens > 500 * 50
    assert w.tokens > w.budget
    # Even a budget of 1 keeps it.
    w1 = fresh_meter().measure(r, tool_schemas(), 1, LIMIT)
    assert w1.start == 13 and w1.window == w.window


def test_window_fits_after_pruning():
    r = _turns([400] * 10)  # each turn ~ 4 * (3 + 100) tokens
    meter = fresh_meter()
    w = meter.measure(r, [], 1_000, LIMIT)
    assert w.tokens <= 1_000
    previous_turn = meter.sizes[w.start_index - 4:w.start_index]
    assert w.tokens + sum(previous_turn) > 1_000  # not one turn more than needed was dropped
    assert 0 < w.pruned_turns < 10
    assert r.ctx[w.start][1] == "user"
    assert w.outside + w.window == math.ceil(meter.total)


def test_budget_zero_keeps_everything():
    r = _turns([4_000] * 30)
    meter = fresh_meter()
    small = meter.measure(r, tool_schemas(), 2_000, LIMIT)
    assert small.pruned_turns == 29
    w = meter.measure(r, tool_schemas(), 0, LIMIT)  # then switched off: everything is back
    assert meter.window_ids() == list(r.ctx)
    assert (w.start, w.start_index, w.outside, w.pruned_turns, w.budget) == (1, 0, 0, 0, 0)
    assert w.tokens > 60_000
    assert w == fresh_meter().measure(r, tool_schemas(), 0, LIMIT)


def test_a_larger_budget_lets_the_window_grow_back():
    r = _turns([400] * 10)
    meter = fresh_meter()
    narrow = meter.measure(r, [], 1_000, LIMIT)
    wide = meter.measure(r, [], 3_000, LIMIT)
    assert wide.start_index < narrow.start_index
    assert wide == fresh_meter().measure(r, [], 3_000, LIMIT)


def test_empty_context():
    w = fresh_meter().measure(Replayer(), tool_schemas(), 100, LIMIT)
    assert (w.start, w.start_index, w.window, w.outside, w.pruned_turns) == (None, 0, 0, 0, 0)
    assert abs(w.tokens - (w.system + w.tools)) <= 1  # the fixed part alone, rounded


@pytest.mark.parametrize("change", ["unpin", "shorter system prompt"])
def test_window_grows_back_when_the_fixed_part_shrinks(change):
    """The window start is a function of budget + context: after /unpin (or a shorter
    system prompt) the incremental meter must give what a fresh one (a restart) gives."""
    rows = [(i, "user" if i % 2 else "assistant", {"content": "x" * 400}) for i in range(1, 11)]
    r = Replayer.from_rows(rows)
    meter = fresh_meter()
    before = meter.measure(r, [], 600, LIMIT)
    if change == "unpin":
        r.apply((11, "pin", {"text": "p" * 1600}))
        meter.measure(r, [], 600, LIMIT)
        r.apply((12, "unpin", {"index": 1}))
    else:
        r.apply((11, "system", {"content": "s" * 1600}))
        meter.measure(r, [], 600, LIMIT)
        r.apply((12, "system", {"content": ""}))
    after = meter.measure(r, [], 600, LIMIT)
    assert after == fresh_meter().measure(r, [], 600, LIMIT)
    assert after.start == before.start


# -- the gauge -------------------------------------------------------------------------------


def _window(tokens: int, limit: int) -> Window:
    return Window(start=None, start_index=0, tokens=tokens, system=0, tools=0, pins=0,
                  summaries=0, window=0, outside=0, pruned_turns=0, budget=0, limit=limit,
                  exact=False)


@pytest.mark.parametrize(("tokens", "limit", "state"), [
    (0, 100, "normal"), (79, 100, "normal"), (80, 100, "warning"), (94, 100, "warning"),
    (95, 100, "critical"), (99, 100, "critical"), (100, 100, "full"), (150, 100, "full"),
    (159_999, 200_000, "normal"), (160_000, 200_000, "warning"),
    (189_999, 200_000, "warning"), (190_000, 200_000, "critical"),
    (199_999, 200_000, "critical"), (200_000, 200_000, "full"),
    (10, 0, "normal"),
])
def test_thresholds(tokens, limit, state):
    w = _window(tokens, limit)
    assert w.state == state
    assert w.percent == (100.0 * tokens / limit if limit else 0.0)
