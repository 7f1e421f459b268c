"""Agents (SPEC §6), fork: a child gets the whole context or only what follows a mark
(named or unnamed), inherits the system prompt, pins and budget but no marks, and then
lives apart from its parent; the delegation pattern; --model, --name and `--`; a child
with a prompt starts at once and streams alongside its parent, one without stays idle
unless its context ends with a user message; and the LLM forking through the slash tool.
"""

from __future__ import annotations

import pytest

from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.notices import StreamDelta
from tests.integration.session_helpers import fork, msgs, talk


# -- fork -----------------------------------------------------------------------------


async def test_fork_whole_context(session):
    root = session.tree.root.id
    await talk(session, root, "one")
    await talk(session, root, "two")
    result = await session.command(root, "/fork")
    child = result.data
    short = session.tree.short_id(child)
    assert len(short) >= 6 and child.startswith(short)
    assert result.lines == [f"Forked. Child: {short}"]
    agent = session.tree[child]
    assert agent.parent_id == root
    assert agent.model == "offline"
    assert agent.status == "idle"
    assert await msgs(session, child) == await msgs(session, root)
    assert len(await msgs(session, child)) == 4
    # A child inherits no marks.
    await session.command(root, "/mark P")
    assert (await session.replayer(child)).valid_marks() == []


async def test_a_childs_rewind_to_its_parents_mark_names_where_the_mark_lives(session):
    """Marks are per agent and a fork inherits none (SPEC section 4): `/rewind start` in a
    child refuses and writes nothing, but says that `start` is its parent's mark, so the
    user is not left guessing; a name nobody has gets the plain error."""
    root = session.tree.root.id
    await session.command(root, "/mark start")
    await talk(session, root, "one")
    await talk(session, root, "two")
    kid = await fork(session, root, "--name kid")
    before = await msgs(session, kid)
    for command in ("/rewind start", "/clear start"):
        with pytest.raises(CommandError) as caught:
            await session.command(kid, command)
        text = str(caught.value)
        assert "no mark named 'start'" in text
        assert f"'start' is a mark of {session.tree.label(root)}" in text
        assert "/fork start" in text
    with pytest.raises(CommandError) as caught:
        await session.command(kid, "/rewind nowhere")
    assert "no mark named 'nowhere'" in str(caught.value)
    assert "is a mark of" not in str(caught.value)
    assert (await session.replayer(kid)).valid_marks() == []
    assert await msgs(session, kid) == before


async def test_fork_inherits_system_pins_budget(session):
    root = session.tree.root.id
    await session.command(root, "/system You are terse.")
    await session.command(root, "/pin always cite")
    await talk(session, root, "one")
    child = await fork(session, root)
    r = await session.replayer(child)
    assert r.system == "You are terse."
    assert r.pins == ["always cite"]
    assert session.budget_of(session.tree[child]) == session.budget_of(session.tree[root])
    # Settings changed later in the parent do not reach the child.
    await session.command(root, "/pin parent only")
    assert (await session.replayer(child)).pins == ["always cite"]


async def test_forked_agents_are_independent(session):
    root = session.tree.root.id
    await talk(session, root, "one")
    await talk(session, root, "two")
    child = await fork(session, root)
    inherited = await msgs(session, child)
    await session.command(root, "/clear")
    assert await msgs(session, child) == inherited
    await talk(session, root, "parent only")
    first = inherited[0][0]
    await session.command(child, f"/forget --ids {first}")
    assert [m[2] for m in await msgs(session, root)][0] == "parent only"
    assert first not in [m[0] for m in await msgs(session, child)]
    await talk(session, child, "child only")
    assert "child only" not in [m[2] for m in await msgs(session, root)]


async def test_fork_from_mark_gives_only_what_follows(session):
    root = session.tree.root.id
    await talk(session, root, "before")
    await session.command(root, "/mark M")
    mark_event = (await session.replayer(root)).find_mark("M").event_id
    await talk(session, root, "after")
    parent = await msgs(session, root)
    result = await session.command(root, "/fork M")
    assert result.lines[0].startswith(f"Forked. Child: {session.tree.short_id(result.data)}")
    child = await msgs(session, result.data)
    assert child == [m for m in parent if m[0] > mark_event]
    assert [m[2] for m in child][0] == "after"
    assert len(child) == 2


async def test_fork_from_unnamed_mark_by_label(session):
    root = session.tree.root.id
    await talk(session, root, "before")
    await session.command(root, "/mark")
    label = (await session.replayer(root)).valid_marks()[0].label
    assert label.startswith("#")
    await talk(session, root, "after")
    child = await fork(session, root, label)
    assert [m[2] for m in await msgs(session, child)][0] == "after"


async def test_delegation_pattern(session):
    root = session.tree.root.id
    await talk(session, root, "private planning, not for the child")
    await session.command(root, "/mark R")
    mark_event = (await session.replayer(root)).find_mark("R").event_id
    await talk(session, root, "the brief: summarise the logs")
    brief = await msgs(session, root)
    brief = [m for m in brief if m[0] > mark_event]
    assert len(brief) == 2
    child = await fork(session, root, "R Do it now, don't wait.")
    await session.wait_idle()
    ctx = await msgs(session, child)
    assert ctx[:2] == brief
    assert ctx[2][1:] == ("user", "Do it now, don't wait.")
    assert ctx[3][1] == "assistant"
    assert len(ctx) == 4
    assert all(m[0] > mark_event for m in ctx)
    assert not any(m[1] == "user" and "private planning" in m[2] for m in ctx)
    # What the child's model saw: the brief, its reply, the prompt.
    assert "I can see 3 messages (2 from you)" in ctx[3][2]
    assert 'the first reads: "the brief: summarise the logs"' in ctx[3][2]
    # The parent is unchanged.
    assert len(await msgs(session, root)) == 4


async def test_fork_options_model_and_name(session):
    root = session.tree.root.id
    await talk(session, root, "one")
    child = await fork(session, root, "--model offline --name helper")
    agent = session.tree[child]
    assert agent.name == "helper"
    assert agent.model == "offline"
    assert session.model_of(agent) == "offline"
    assert session.tree.label(child).startswith("helper (")
    other = await fork(session, root, "--name=helper2 --model=offline")
    assert session.tree[other].name == "helper2"
    # Options after a mark, then a raw prompt.
    await session.command(root, "/mark M")
    await talk(session, root, "two")
    third = await fork(session, root, "M --name helper3 go on, it's the prompt")
    await session.wait_idle()
    assert session.tree[third].name == "helper3"
    ctx = await msgs(session, third)
    assert [m[2] for m in ctx][:3] == [
        "two", (await msgs(session, root))[-1][2], "go on, it's the prompt"]
    # `--` ends the options: the rest is the prompt.
    fourth = await fork(session, root, "-- --name is text")
    await session.wait_idle()
    assert session.tree[fourth].name is None
    assert "--name is text" in [m[2] for m in await msgs(session, fourth)]


async def test_child_with_prompt_starts_at_once_and_runs_concurrently(slow_session):
    session = slow_session
    root = session.tree.root.id
    await talk(session, root, "hello")
    order: list[str] = []
    session.listeners.append(
        lambda n: order.append(n.agent_id) if isinstance(n, StreamDelta) else None)
    child = await fork(session, root, "--name kid work on this please")
    agent = session.tree[child]
    assert agent.status == "working"
    assert agent.task is not None and not agent.task.done()
    # The parent keeps working while the child does.
    task = await session.say(root, "meanwhile in the parent")
    assert not agent.task.done()
    assert await task
    await session.wait_idle()
    assert agent.status == "idle"
    assert (await msgs(session, child))[-1][1] == "assistant"
    assert (await msgs(session, root))[-1][1] == "assistant"
    kid = [i for i, a in enumerate(order) if a == child]
    mine = [i for i, a in enumerate(order) if a == root]
    assert kid and mine
    # The two streams interleave.
    assert kid[0] < mine[-1] and mine[0] < kid[-1]


async def test_child_without_prompt_ending_with_reply_stays_idle(session):
    root = session.tree.root.id
    await talk(session, root, "one")
    child = await fork(session, root)
    before = await msgs(session, child)
    assert session.tree[child].task is None
    await session.wait_idle()
    assert session.tree[child].status == "idle"
    assert await msgs(session, child) == before


async def test_plain_fork_never_answers_an_inherited_unanswered_message(session):
    """Issue 13, item 7: a /fork without PROMPT copies the context and waits; it does
    not start answering a user message it inherited unanswered. With a PROMPT it starts."""
    root = session.tree.root.id
    await talk(session, root, "one")
    last = (await msgs(session, root))[-1]
    assert last[1] == "assistant"
    await session.command(root, f"/forget --ids {last[0]}")
    child = await fork(session, root)
    assert session.tree[child].task is None
    await session.wait_idle()
    assert [m[1] for m in await msgs(session, child)] == ["user"]
    assert session.tree[child].status == "idle"
    prompted = await fork(session, root, "and now answer this")
    await session.wait_idle()
    assert [m[1] for m in await msgs(session, prompted)] == ["user", "user", "assistant"]


async def test_plain_fork_of_a_working_parent_does_not_answer_its_message(slow_session):
    session = slow_session
    root = session.tree.root.id
    task = await session.say(root, "a long question")
    assert session.tree[root].in_turn
    child = await fork(session, root, "--name kid")
    assert session.tree[child].task is None
    assert await task
    await session.wait_idle()
    assert [m[2] for m in await msgs(session, child)] == ["a long question"]


async def test_llm_fork_through_slash_tool(session):
    root = session.tree.root.id
    await talk(session, root, "hello")
    await talk(session, root, "@slash fork --name helper look into it")
    await session.wait_idle()
    helper = session.tree.resolve("helper")
    assert helper.parent_id == root
    ctx = await msgs(session, helper.id)
    users = [m[2] for m in ctx if m[1] == "user"]
    assert users[-1] == "look into it"
    assert ctx[-1][1] == "assistant"
    result = next(e for e in await session.store.events(root) if e.kind == "tool_result")
    assert result.payload["content"].startswith("Forked. Child: ")
