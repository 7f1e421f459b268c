"""A `pruned_summary` event comes after every turn once the window prunes: its outline
(what the replay keeps) leaves its text in the log, read back by id like a message's."""

from __future__ import annotations

from ikigai_tui.core.replay.bodies import outline_row
from ikigai_tui.core.events import WriteBatch
from tests.contract.test_event_log import with_agents


async def test_the_outline_of_a_pruned_summary_leaves_its_text_in_the_log(backend):
    log = await with_agents(backend, "a")
    try:
        batch = WriteBatch()
        batch.add("a", "user", {"content": "hello"})
        payload = {"summary": "## Goal\nlong text", "ranges": [[1, 1]], "messages": 1,
                   "tokens": 9, "model": "m", "extractive": False, "previous": None, "new": 1}
        batch.add("a", "pruned_summary", payload)
        events = await log.write(batch)
        outlines = await log.agent_outline("a")
        assert outlines == [outline_row(e.row) for e in events]
        assert "summary" not in outlines[1][2] and outlines[1][2]["messages"] == 1
        assert (await log.payloads([events[1].id]))[events[1].id] == payload
    finally:
        await log.close()
