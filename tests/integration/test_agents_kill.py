"""Agents (SPEC §6), kill: /kill takes the agent's descendants with it and keeps their
history readable while refusing every change to a dead agent; the root cannot be killed;
the LLM may kill only its own descendants (also through the slash tool), the human any
agent; a working child is cancelled, its partial reply flagged interrupted; and a /kill
that fails touches nothing.
"""

from __future__ import annotations

import asyncio

import pytest

from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.notices import StreamDelta
from tests.integration.session_helpers import build_tree, fork, msgs, talk


# -- kill -----------------------------------------------------------------------------


async def test_kill_kills_descendants_and_keeps_history(session):
    root, a, b, c = await build_tree(session)
    history_a = await msgs(session, a)
    history_b = await msgs(session, b)
    out = await session.command(root, "/kill a")
    assert out.lines == [f"Killed {session.tree.label(a)} and 1 descendant."]
    assert session.tree[a].status == "dead"
    assert session.tree[b].status == "dead"
    assert session.tree[c].status == "idle"
    assert session.tree[root].status == "idle"
    for agent in (a, b):
        assert "kill" in [e.kind for e in await session.store.events(agent)]
    # History stays readable.
    assert await msgs(session, a) == history_a
    assert await msgs(session, b) == history_b
    assert (await session.command(a, "/marks")).lines == ["No marks."]
    lines = (await session.command(b, "/context")).lines
    assert any(line.strip().startswith("window") and "(6 messages)" in line for line in lines)
    # ... but a dead agent cannot change.
    before = await session.store.count_events()
    with pytest.raises(CommandError, match="dead"):
        await session.command(a, "/mark X")
    with pytest.raises(CommandError, match="dead"):
        await session.command(b, "/clear")  # (a /fork from it makes a live child: test_mail_revive)
    with pytest.raises(CommandError, match="dead"):
        await session.say(a, "are you there?")
    with pytest.raises(CommandError, match="already dead"):
        await session.command(root, "/kill b")
    assert await session.store.count_events() == before


async def test_root_cannot_be_killed(session):
    root, a, _b, _c = await build_tree(session)
    before = await session.store.count_events()
    for who in (root, a):
        for source in ("human", "llm"):
            with pytest.raises(CommandError, match="root agent cannot be killed"):
                await session.command(who, f"/kill {root[:8]}", source=source)
    assert session.tree[root].status == "idle"
    assert await session.store.count_events() == before


async def test_llm_may_kill_only_its_own_descendants(session):
    root, a, b, c = await build_tree(session)
    before = await session.store.count_events()
    for who, target in ((a, "c"), (a, "a"), (b, "a"), (c, "b"), (b, "c")):
        with pytest.raises(CommandError, match="only kill its own descendants"):
            await session.command(who, f"/kill {target}", source="llm")
    assert await session.store.count_events() == before
    assert all(session.tree[x].status == "idle" for x in (a, b, c))
    out = await session.command(a, "/kill b", source="llm")
    assert out.lines == [f"Killed {session.tree.label(b)}."]
    assert session.tree[b].status == "dead"
    # The human is not limited to a subtree.
    await session.command(a, "/kill c")
    assert session.tree[c].status == "dead"


async def test_llm_kill_through_slash_tool(session):
    root, a, b, c = await build_tree(session)
    await talk(session, a, "@slash kill c")
    result = [e for e in await session.store.events(a) if e.kind == "tool_result"][-1]
    assert result.payload["is_error"] is True
    assert "only kill its own descendants" in result.payload["content"]
    assert session.tree[c].status == "idle"
    await talk(session, a, "@slash kill b")
    result = [e for e in await session.store.events(a) if e.kind == "tool_result"][-1]
    assert result.payload["is_error"] is False
    assert session.tree[b].status == "dead"


async def test_kill_cancels_a_working_child(slow_session):
    session = slow_session
    root = session.tree.root.id
    streamed = asyncio.Event()
    session.listeners.append(lambda n: streamed.set() if isinstance(n, StreamDelta) else None)
    child = await fork(session, root, "--name kid a long task")
    task = session.tree[child].task
    assert task is not None and not task.done()
    await asyncio.wait_for(streamed.wait(), 5)  # part of the reply has arrived
    await session.command(root, "/kill kid")
    assert task.done()
    assert session.tree[child].status == "dead"
    await session.wait_idle()
    assert session.tree[child].status == "dead"
    kinds = [e.kind for e in await session.store.events(child)]
    assert "kill" in kinds
    # No complete reply arrived; the partial one is kept, flagged interrupted.
    replies = [e.payload for e in await session.store.events(child) if e.kind == "assistant"]
    assert len(replies) == 1 and replies[0]["content"]
    assert replies[0].get("interrupted") is True


async def test_failed_kill_does_not_touch_the_target(slow_session):
    """A /kill that fails (here: issued on a dead agent) must not cancel anything."""
    session = slow_session
    root = session.tree.root.id
    dead = await fork(session, root, "--name gone")
    await session.command(root, "/kill gone")
    worker = await fork(session, root, "--name busy a long job")
    task = session.tree[worker].task
    assert task is not None and not task.done()
    await asyncio.sleep(0.05)  # a few words of the reply have streamed
    before = await session.store.count_events()
    with pytest.raises(CommandError, match="dead"):
        await session.command(dead, "/kill busy")
    assert await session.store.count_events() == before
    assert not task.done()
    await session.wait_idle()
    last = (await msgs(session, worker))[-1]
    assert last[1] == "assistant"
    assert not any(e.payload.get("interrupted") for e in await session.store.events(worker))
