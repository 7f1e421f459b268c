"""Agents (SPEC §6): fork, delegation, concurrency, mail, kill, lookup, persistence."""

from __future__ import annotations

import asyncio

import pytest

from ikigai_tui.core.commands import CommandError
from ikigai_tui.core.notices import StreamDelta
from ikigai_tui.core.session import Session, SessionSettings
from ikigai_tui.core.store import Store
from ikigai_tui.llm.providers import Providers


@pytest.fixture
async def slow_session(tmp_path):
    """A session whose offline model streams one word every 10 ms."""
    store = await Store.open(tmp_path / "slow.db")
    sess = await Session.open(store, Providers(offline_delay=0.01), SessionSettings())
    yield sess
    await sess.close()
    await store.close()


async def talk(session, agent_id: str, text: str) -> None:
    task = await session.say(agent_id, text)
    assert await task


async def msgs(session, agent_id: str) -> list[tuple[int, str, str]]:
    r = await session.replayer(agent_id)
    return [(i, kind, payload.get("content")) for i, kind, payload in r.messages()]


async def fork(session, agent_id: str, args: str = "", source: str = "human") -> str:
    result = await session.command(agent_id, f"/fork {args}".strip(), source=source)
    assert result.lines[0].startswith("Forked. Child: ")
    assert isinstance(result.data, str) and result.data in session.tree
    return result.data


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


async def test_child_whose_context_ends_with_a_user_message_starts(session):
    root = session.tree.root.id
    await talk(session, root, "one")
    last = (await msgs(session, root))[-1]
    assert last[1] == "assistant"
    await session.command(root, f"/forget --ids {last[0]}")
    child = await fork(session, root)
    await session.wait_idle()
    ctx = await msgs(session, child)
    assert [m[1] for m in ctx] == ["user", "assistant"]
    assert ctx[1][0] != last[0]


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


# -- mail -----------------------------------------------------------------------------


async def test_send_and_check_mail(session):
    root = session.tree.root.id
    kid = await fork(session, root, "--name kid")
    label = session.tree.label(root)
    out = await session.command(root, "/send kid hello there")
    assert out.lines == [f"Mail sent to {session.tree.label(kid)}."]
    await session.command(root, '/send kid "second one"')
    assert session.tree[kid].unread == 2
    assert len((await session.replayer(kid)).unread) == 2
    before = await msgs(session, kid)
    out = await session.command(kid, "/check-mail")
    assert out.lines == [f"Mail from {label}: hello there", f"Mail from {label}: second one"]
    after = await msgs(session, kid)
    assert after[: len(before)] == before
    assert [(m[1], m[2]) for m in after[len(before):]] == [
        ("user", f"Mail from {label}: hello there"), ("user", f"Mail from {label}: second one")]
    assert session.tree[kid].unread == 0
    assert (await session.replayer(kid)).unread == {}
    assert (await session.command(kid, "/check-mail")).lines == ["No new mail."]
    kinds = [e.kind for e in await session.store.events(kid)]
    assert kinds.count("mail") == 2 and kinds.count("mail_read") == 1
    # The sender's context is untouched by sending.
    assert await msgs(session, root) == []


async def test_mail_from_child_to_parent_and_llm_check_mail(session):
    root = session.tree.root.id
    kid = await fork(session, root, "--name kid")
    await session.command(kid, "/send root done with it", source="llm")
    assert session.tree[root].unread == 1
    out = await session.command(root, "/check-mail", source="llm")
    assert out.lines == [f"Mail from {session.tree.label(kid)}: done with it"]
    assert session.tree[root].unread == 0
    assert (await session.command(root, "/check-mail")).lines == ["No new mail."]


# -- kill -----------------------------------------------------------------------------


async def build_tree(session):
    """root -> a -> b, root -> c; each with some history."""
    root = session.tree.root.id
    await talk(session, root, "root talk")
    a = await fork(session, root, "--name a")
    await talk(session, a, "a talk")
    b = await fork(session, a, "--name b")
    await talk(session, b, "b talk")
    c = await fork(session, root, "--name c")
    return root, a, b, c


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
        await session.command(b, "/fork")
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
    child = await fork(session, root, "--name kid a long task")
    task = session.tree[child].task
    assert task is not None and not task.done()
    await session.command(root, "/kill kid")
    assert task.done()
    assert session.tree[child].status == "dead"
    await session.wait_idle()
    assert session.tree[child].status == "dead"
    kinds = [e.kind for e in await session.store.events(child)]
    assert "kill" in kinds
    # No complete reply arrived; a partial one is flagged interrupted.
    for e in await session.store.events(child):
        if e.kind == "assistant":
            assert e.payload.get("interrupted") is True


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


# -- AGENT resolution -----------------------------------------------------------------


@pytest.fixture
def fixed_ids(session, monkeypatch):
    ids = iter(["abc1234" + "0" * 25, "abc1235" + "0" * 25, "fedcba" + "9" * 26])
    monkeypatch.setattr(session, "new_id", lambda: next(ids))


async def test_agent_resolution(session, fixed_ids):
    root = session.tree.root.id
    if root.startswith(("abc", "fed")):
        pytest.skip("random root id collides with the fixed ids")
    first = (await session.command(root, "/fork")).data
    out = await session.command(root, "/fork --name worker")
    second = out.data
    assert out.lines == ["Forked. Child: abc1235"]  # 6 characters are not unique: 7
    assert session.tree.short_id(first) == "abc1234"
    assert "abc1234  idle" in "\n".join((await session.command(root, "/agents")).lines)
    third = (await session.command(root, "/fork")).data
    assert session.tree.short_id(third) == "fedcba"
    # By unique prefix, long or short, and by name.
    await session.command(root, "/send abc1234 to first")
    await session.command(root, "/send abc1235 to second")
    await session.command(root, "/send worker by name")
    await session.command(root, "/send fed to third")
    await session.command(root, f"/send {root[:8]} to root")
    assert session.tree[first].unread == 1
    assert session.tree[second].unread == 2
    assert session.tree[third].unread == 1
    assert session.tree[root].unread == 1
    assert session.tree.resolve(first).id == first
    # Ambiguous prefixes name the candidates and write nothing.
    before = await session.store.count_events()
    for ref in ("abc", "abc123"):
        with pytest.raises(CommandError) as info:
            await session.command(root, f"/send {ref} hi")
        message = str(info.value)
        assert f"'{ref}' matches several agents" in message
        assert "abc1234" in message and "abc1235" in message
    with pytest.raises(CommandError, match="several agents"):
        await session.command(root, "/kill abc12")
    with pytest.raises(CommandError, match="no agent named or with id starting 'zzz'"):
        await session.command(root, "/kill zzz")
    assert await session.store.count_events() == before
    assert session.tree.label(second) == "worker (abc1235)"


# -- persistence ----------------------------------------------------------------------


async def test_agents_persist_across_reopen(session, db_path):
    root, a, b, c = await build_tree(session)
    await session.command(root, "/mark R")
    await talk(session, root, "brief")
    d = await fork(session, root, "R --name d --model offline go")
    await session.wait_idle()
    await session.command(root, "/kill a")
    await session.command(root, "/send c hello")
    await session.command(c, "/pin c note")
    before = {x.id: (x.parent_id, x.name, x.status, x.model) for x in session.tree}
    contexts = {x: await msgs(session, x) for x in (root, a, b, c, d)}
    marks = [m.name for m in (await session.replayer(root)).valid_marks()]

    store = await Store.open(db_path)
    try:
        again = await Session.open(store, Providers(), SessionSettings())
        after = {x.id: (x.parent_id, x.name, x.status, x.model) for x in again.tree}
        assert after == before
        assert again.tree.root.id == root
        assert after[a][2] == after[b][2] == "dead"
        for agent_id, ctx in contexts.items():
            assert await msgs(again, agent_id) == ctx, agent_id
        assert [m.name for m in (await again.replayer(root)).valid_marks()] == marks
        assert len((await again.replayer(c)).unread) == 1
        assert again.tree[c].unread == 1
        assert (await again.replayer(c)).pins == ["c note"]
        assert again.tree.resolve("d").id == d
        with pytest.raises(CommandError, match="dead"):
            await again.say(a, "still there?")
        await again.close()
    finally:
        await store.close()
