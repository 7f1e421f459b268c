"""Commands (SPEC §4) from the LLM: human-only commands refused, directly and through the
slash tool, writing nothing; the LLM's own commands allowed outside a turn and recorded
as its; an LLM /clear or /rewind deferred to the end of the turn, after the whole tool
exchange and the closing reply, while /mark applies at once; a bad mark an error result.
"""

from __future__ import annotations

import pytest

from ikigai_tui.core.errors import CommandError
from tests.integration.session_helpers import ids, talk


# -- the LLM side: human-only commands refused, context changes deferred --------------

HUMAN_ONLY = ["/undo", "/model", "/model offline", "/system x", "/pin x", "/unpin 1",
              "/pins", "/help", "/exit", "/forget --ids 1", "/remember --ids 1"]


@pytest.mark.parametrize("line", HUMAN_ONLY)
async def test_llm_cannot_run_human_only(session, line):
    root = session.tree.root.id
    await talk(session, root, "hello")
    await session.command(root, "/pin keep")
    before = await session.store.count_events()
    with pytest.raises(CommandError, match="is for the human only"):
        await session.command(root, line, source="llm")
    assert await session.store.count_events() == before


async def test_llm_may_run_its_commands_outside_a_turn(session):
    root = session.tree.root.id
    await talk(session, root, "hello")
    out = await session.command(root, "/mark L", source="llm")
    assert out.lines == ["Checkpoint 'L' created."]
    out = await session.command(root, "/marks", source="llm")
    assert out.lines[0].startswith("L  at position 2")
    await talk(session, root, "more")
    out = await session.command(root, "/rewind", source="llm")
    assert out.lines == ["Rewound to 'L'."]
    events = await session.store.events(root)
    assert [e.payload["source"] for e in events if e.kind == "command"] == ["llm"] * 3


async def test_llm_slash_tool_refuses_human_only(session):
    root = session.tree.root.id
    await talk(session, root, "hello")
    await talk(session, root, "@slash undo")
    events = await session.store.events(root)
    results = [e for e in events if e.kind == "tool_result"]
    assert len(results) == 1
    assert results[0].payload["is_error"] is True
    assert "'undo' is not available" in results[0].payload["content"]
    assert "undo" not in [e.kind for e in events]
    assert "command" not in [e.kind for e in events]


async def test_llm_clear_is_deferred_to_the_end_of_the_turn(session):
    root = session.tree.root.id
    await talk(session, root, "first")
    await talk(session, root, "@slash clear")
    events = await session.store.events(root)
    kinds = [e.kind for e in events]
    assert kinds.count("clear") == 1
    clear = next(e for e in events if e.kind == "clear")
    call = next(e for e in events if e.kind == "tool_call")
    result = next(e for e in events if e.kind == "tool_result")
    final = [e for e in events if e.kind == "assistant"][-1]
    assert result.payload["call_event"] == call.id
    assert result.payload["content"].startswith("Accepted; applied when this turn ends")
    assert result.payload["is_error"] is False
    # The clear lands after the whole tool exchange and the reply that closes the turn.
    assert call.id < result.id < final.id < clear.id
    assert final.payload["content"].startswith("Tool results: Accepted")
    record = [e for e in events if e.kind == "command"]
    assert [(r.payload["text"], r.payload["source"]) for r in record] == [("/clear", "llm")]
    # After the turn the context is empty; the agent is idle.
    assert (await session.replayer(root)).messages() == []
    assert session.tree[root].status == "idle"
    assert session.tree[root].in_turn is False
    # The next turn starts from nothing.
    await talk(session, root, "again")
    reply = (await session.messages(root))[-1]
    assert "I can see 1 message" in reply[2]["content"]


async def test_llm_rewind_deferred_mark_immediate(session):
    root = session.tree.root.id
    await talk(session, root, "first")
    kept = await ids(session, root)
    await talk(session, root, "@slash mark M")
    events = await session.store.events(root)
    mark = next(e for e in events if e.kind == "mark")
    result = next(e for e in events if e.kind == "tool_result")
    assert mark.id < result.id  # /mark is not deferred
    assert result.payload["content"] == "Checkpoint 'M' created."
    await talk(session, root, "@slash rewind M")
    events = await session.store.events(root)
    rewind = next(e for e in events if e.kind == "rewind")
    last_result = [e for e in events if e.kind == "tool_result"][-1]
    assert last_result.payload["content"].startswith("Accepted; applied when this turn ends")
    assert rewind.id > last_result.id
    # Rewound to M, which was set mid-turn after the user message "@slash mark M".
    now = await ids(session, root)
    assert now[:2] == kept
    assert all(i < mark.id for i in now)


async def test_llm_clear_with_bad_mark_is_an_error_result(session):
    root = session.tree.root.id
    await talk(session, root, "first")
    before = await ids(session, root)
    await talk(session, root, "@slash clear NOPE")
    events = await session.store.events(root)
    result = next(e for e in events if e.kind == "tool_result")
    assert result.payload["is_error"] is True
    assert "no mark named 'NOPE'" in result.payload["content"]
    assert "rewind" not in [e.kind for e in events]
    assert (await ids(session, root))[:2] == before
