"""`import_log` (core/ports.py LogImport, for `ikigai copy`): a whole log written as it is
given, ids and times kept, from pages read as they come, into an empty log only, all or
nothing; what the store derives from events (search, outlines, usage sums) is made as
for any write, and the next write follows the last id."""

from __future__ import annotations

import pytest

from ikigai_tui.core.events import AgentRecord, Event
from ikigai_tui.core.ports import ConflictError

ROOT = AgentRecord("r00t", None, "root", "offline", "idle", 1000.5, None, 50_000)
# Listed before its parent (as an older log may list them): written after it.
KID = AgentRecord("k1d", "r00t", "kid", "gpt-4o", "dead", 1000.25, 3, None)
EVENTS = [
    Event(1, "r00t", "user", {"content": "tangerine orchards"}, 1001.125),
    Event(2, "r00t", "tool_call", {"call_id": "c1", "name": "bash",
                                   "arguments": '{"command": "ls"}'}, 1002.0),
    Event(3, "r00t", "tool_result", {"call_id": "c1", "call_event": 2, "content": "a b"}, 1003.0),
    Event(4, "k1d", "user", {"content": "kid words ünïcode 🍊"}, 1004.0),
    Event(5, "k1d", "usage", {"model": "gpt-4o", "input_tokens": 10, "output_tokens": 4}, 1005.0),
    Event(6, "r00t", "mark", {"name": "A"}, 1006.0),
    Event(7, "k1d", "kill", {}, 1007.0),
]
FACTORS = {"offline": (1.25, 7), "gpt-4o": (0.5, 1)}


async def pages(events, size=2):
    for start in range(0, len(events), size):
        yield events[start:start + size]


async def test_a_log_is_written_as_given(backend):
    store = await backend.open()
    try:
        assert await store.import_log([KID, ROOT], pages(EVENTS), FACTORS) == len(EVENTS)
        assert await store.events() == EVENTS
        assert sorted(await store.agents()) == sorted([ROOT, KID])
        assert await store.token_factors() == FACTORS
        assert [e.id for e in await store.search("tangerine", ["r00t"])] == [1]
        assert [row[0] for row in await store.agent_outline("r00t")] == [1, 2, 3, 6]
        assert (await store.payloads([4]))[4]["content"] == "kid words ünïcode 🍊"
        assert [(a, i, o) for a, _m, _t, i, o in await store.usage_sums(200_000)] == [
            ("k1d", 10, 4)]
        assert (await store.append("r00t", "user", {"content": "next"})).id == 8
    finally:
        await store.close()
    again = await backend.open(readonly=True)  # another connection reads it the same
    try:
        assert (await again.events())[:len(EVENTS)] == EVENTS
    finally:
        await again.close()


async def test_a_log_that_is_not_empty_is_refused_and_left_as_it_was(backend):
    store = await backend.open()
    try:
        await store.import_log([ROOT], pages(EVENTS[:1]), {})
        with pytest.raises(ConflictError, match="not empty"):
            await store.import_log([KID], pages(EVENTS[3:4]), FACTORS)
        assert await store.events() == EVENTS[:1]
        assert await store.agents() == [ROOT] and await store.token_factors() == {}
    finally:
        await store.close()


async def test_a_copy_that_fails_midway_writes_nothing(backend):
    async def failing():
        yield EVENTS[:3]
        raise RuntimeError("the source went away")

    store = await backend.open()
    try:
        with pytest.raises(RuntimeError, match="the source went away"):
            await store.import_log([ROOT, KID], failing(), FACTORS)
        assert await store.count_events() == 0 and await store.agents() == []
        assert await store.token_factors() == {}
        assert await store.import_log([ROOT, KID], pages(EVENTS), FACTORS) == len(EVENTS)
    finally:
        await store.close()
