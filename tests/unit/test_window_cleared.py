"""The meter and cleared tool output (issue 25 item 5): a cleared result counts as its
stub; once /undo or a restore brings its text back it counts whole again, however the
meter's counts were merged meanwhile (its own count is kept, never its stub's)."""

from __future__ import annotations

from ikigai_tui.core.replay.replayer import Replayer
from tests.unit.window_helpers import LIMIT, fresh_meter

TEXT = "word " * 800


def rows() -> list[tuple[int, str, dict]]:
    out, n = [], 1
    for i in range(4):
        out.append((n, "user", {"content": f"step {i}"}))
        out.append((n + 1, "tool_call", {"call_id": f"c{n}", "name": "bash", "arguments": "{}"}))
        out.append((n + 2, "tool_result", {"call_id": f"c{n}", "call_event": n + 1,
                                           "content": TEXT}))
        out.append((n + 3, "assistant", {"content": "done"}))
        n += 4
    return out


def tokens(meter, r: Replayer) -> int:
    return meter.measure(r, [], 0, LIMIT).tokens


def test_cleared_counts_as_its_stub_and_whole_again_after_undo():
    r = Replayer.from_rows(rows())
    meter = fresh_meter()
    whole = tokens(meter, r)
    clearing = (100, "tool_output", {"action": "clear", "ids": [3, 7, 11], "tokens": [800] * 3})
    r.apply(clearing)
    cleared = tokens(meter, r)
    assert cleared < whole - 2000
    r.apply((101, "pin", {"text": "a note"}))  # another change: a recount with stubs held
    assert tokens(meter, r) > cleared
    meter.cache.merge()  # the kept counts merged into the table, as they are in time
    r.apply((102, "undo", {"target": 101}))
    r.apply((103, "undo", {"target": 100}))
    assert tokens(meter, r) == whole
    assert tokens(fresh_meter(), r) == whole


def test_a_restored_one_counts_whole():
    r = Replayer.from_rows(rows())
    meter = fresh_meter()
    whole = tokens(meter, r)
    r.apply((100, "tool_output", {"action": "clear", "ids": [3, 7], "tokens": [800, 800]}))
    both = tokens(meter, r)
    meter.cache.merge()
    r.apply((101, "tool_output", {"action": "restore", "ids": [7]}))
    one = tokens(meter, r)
    assert one == tokens(fresh_meter(), r)
    assert both < one < whole
