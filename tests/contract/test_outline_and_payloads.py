"""Outlines and bodies through the port: `agent_outline` is `agent_rows` with each
message's text left out (what replay needs), and `payloads` reads the text back by id."""

from __future__ import annotations

from ikigai_tui.core.replay.bodies import outline_row
from ikigai_tui.core.events import WriteBatch
from tests.contract.test_event_log import with_agents


async def test_an_outline_is_the_rows_without_the_text_and_payloads_read_it_back(backend):
    log = await with_agents(backend, "a", "b")
    try:
        batch = WriteBatch()
        batch.add("a", "user", {"content": "hello ✓"})
        batch.add("a", "assistant", {"content": "partial", "interrupted": True})
        batch.add("a", "tool_call", {"call_id": "c1", "name": "f", "arguments": "{\"x\": 1}"})
        batch.add("a", "tool_result", {"call_id": "c1", "call_event": 0, "content": "42",
                                       "is_error": False})
        batch.add("a", "mark", {"name": "m"})
        batch.add("b", "user", {"content": "other agent"})
        batch.add("a", "system", {"content": "be brief"})
        events = await log.write(batch)
        mine = [e for e in events if e.agent_id == "a"]
        assert await log.agent_outline("a") == [outline_row(e.row) for e in mine]
        assert await log.agent_outline("a", upto=mine[2].id) == [outline_row(e.row) for e in mine[:2]]
        outlines = await log.agent_outline("a")
        assert outlines[0][2] == {} and outlines[4][2] == {"name": "m"}
        assert outlines[5][2] == {"content": "be brief"}  # a system event is not a message
        ids = [e.id for e in events]
        assert await log.payloads(ids[::-1]) == {e.id: e.payload for e in events}
        assert await log.payloads([ids[1], 10**9]) == {ids[1]: events[1].payload}
        assert await log.payloads([]) == {}
        many = await log.payloads(list(range(1, 2000)))  # more ids than one SELECT holds
        assert many == {e.id: e.payload for e in events}
    finally:
        await log.close()
