"""Commands that propose, then apply (issue 11): /forget and /remember return a proposal
that a reviewer answers; only the reviewed set is written (a refusal writes only the
command record, --dry-run only shows); mid-turn the reviewed write is kept and committed
exactly at the turn's end; /kill changes nothing until its event is committed.
"""

from __future__ import annotations

import asyncio

import pytest

from ikigai_tui.core.commands.bus import Pending
from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.commands.proposals import ACCEPT_ALL, REFUSE, FilterProposal, Verdict
from ikigai_tui.core.session import Session, SessionSettings
from ikigai_tui.core.ports import StoreError
from ikigai_tui.store.sqlite.store import Store
from ikigai_tui.llm.providers import Providers
from tests.integration.session_helpers import fork, ids, talk


@pytest.fixture
async def slower(tmp_path):
    """A session whose offline model streams one word every 50 ms: a turn lasts ~1.5 s."""
    store = await Store.open(tmp_path / "slower.db")
    sess = await Session.open(store, Providers(offline_delay=0.05), SessionSettings())
    yield sess
    await sess.close()
    await store.close()


async def _events(session, agent_id, kind):
    return [e for e in await session.store.events(agent_id) if e.kind == kind]


async def _three_turns(session) -> tuple[str, list[int]]:
    root = session.tree.root.id
    for text in ("one", "two\nsecond line", "three"):
        await talk(session, root, text)
    return root, await ids(session, root)


async def test_forget_proposes_and_writes_nothing_until_answered(session):
    root, before = await _three_turns(session)
    count = await session.store.count_events()
    pending = await session.propose(root, f"/forget --ids {before[2]},{before[3]}")
    assert isinstance(pending, Pending)
    proposal = pending.proposal
    assert isinstance(proposal, FilterProposal)
    assert (proposal.mode, proposal.ids) == ("forget", (before[2], before[3]))
    assert [(i.id, i.role, i.first_line, i.chosen) for i in proposal.items] == [
        (before[2], "user", "two", True), (before[3], "assistant", proposal.items[1].first_line, True)]
    assert all(i.tokens > 0 for i in proposal.items)
    window = await session.measure(root)
    assert proposal.tokens_before == window.tokens
    # The size after is the size measured after (the counts added, then scaled once): the
    # items' rounded tokens added up can be a token a message more.
    subset = proposal.tokens_after(Verdict.accept([before[3]]))
    assert window.tokens - sum(i.tokens for i in proposal.items) <= proposal.tokens_after() < window.tokens
    assert await session.store.count_events() == count  # nothing yet

    out = await session.answer(pending, Verdict.accept([before[3]]))  # a subset
    assert out.lines == ["Forgot 1 message."]
    [filt] = await _events(session, root, "filter")
    # Besides its ids, the event keeps the command and the context's size before and after.
    assert filt.payload == {
        "mode": "forget", "ids": [before[3]], "command": f"/forget --ids {before[2]},{before[3]}",
        "before": {"messages": 6, "tokens": window.tokens},
        "after": {"messages": 5, "tokens": subset}}
    assert (await session.measure(root)).tokens == subset
    assert await ids(session, root) == [i for i in before if i != before[3]]
    record = (await _events(session, root, "command"))[-1].payload
    assert record["text"] == f"/forget --ids {before[2]},{before[3]}"
    assert record["output"] == ["Forgot 1 message."]


async def test_refused_proposal_writes_only_the_command_record(session):
    root, before = await _three_turns(session)
    pending = await session.propose(root, f"/remember --ids {before[0]}")
    assert isinstance(pending, Pending)
    # remember offers the whole context, the listed message chosen to stay
    assert [(i.id, i.chosen) for i in pending.proposal.items] == [(i, i == before[0]) for i in before]
    count = await session.store.count_events()
    out = await session.answer(pending, REFUSE)
    assert out.lines == ["Cancelled."]
    with pytest.raises(CommandError, match="already answered"):
        await session.answer(pending, REFUSE)
    assert await session.store.count_events() == count + 1
    assert await _events(session, root, "filter") == []
    record = (await _events(session, root, "command"))[-1].payload
    assert (record["text"], record["output"]) == (f"/remember --ids {before[0]}", ["Cancelled."])
    assert await ids(session, root) == before


async def test_a_verdict_naming_messages_not_offered_writes_nothing(session):
    root, before = await _three_turns(session)
    pending = await session.propose(root, f"/forget --ids {before[0]}")
    count = await session.store.count_events()
    with pytest.raises(CommandError, match="not offered"):
        await session.answer(pending, Verdict.accept([before[0], before[1]]))
    assert await session.store.count_events() == count
    with pytest.raises(CommandError, match="already answered"):  # a failed answer ends it
        await session.answer(pending, ACCEPT_ALL)
    pending = await session.propose(root, f"/forget --ids {before[0]}")
    with pytest.raises(CommandError, match="removes nothing"):
        await session.answer(pending, Verdict.accept([]))
    remember = await session.propose(root, f"/remember --ids {before[0]}")
    with pytest.raises(CommandError, match="removes nothing"):
        await session.answer(remember, Verdict.accept(before))
    assert await session.store.count_events() == count
    # as proposed, /remember of every message is allowed (it changes nothing, as before)
    out = await session.command(root, "/remember --ids " + ",".join(map(str, before)))
    assert out.lines == [f"Kept {len(before)} messages; forgot 0."]


async def test_dry_run_only_shows_the_preview(session):
    root, before = await _three_turns(session)
    out = await session.command(root, f"/forget --dry-run --ids {before[0]},{before[1]}")
    assert out.lines[0].startswith("Would forget 2 messages: context ")
    assert out.lines[1].startswith(f"  #{before[0]}  user  ") and out.lines[1].endswith("one")
    assert len(out.lines) == 3
    assert await _events(session, root, "filter") == []
    assert await ids(session, root) == before
    out = await session.command(root, f"/remember --ids {before[0]} --dry-run")
    assert out.lines[0].startswith("Would keep only the others, forgetting 5 messages")
    assert await _events(session, root, "filter") == []


async def test_a_reviewer_answers_through_session_command(session):
    root, before = await _three_turns(session)
    seen = []

    async def reviewer(proposal):
        seen.append(proposal)
        return Verdict.accept([before[1]])

    out = await session.command(root, f"/forget --ids {before[0]},{before[1]}", review=reviewer)
    assert out.lines == ["Forgot 1 message."]
    assert [p.ids for p in seen] == [(before[0], before[1])]
    [filt] = await _events(session, root, "filter")
    assert filt.payload["ids"] == [before[1]]


# -- deferred: the reviewed write, never the text re-run ----------------------------------


async def test_deferred_forget_applies_exactly_the_ids_reviewed(slower):
    session = slower
    root, before = await _three_turns(session)
    task = await session.say(root, "tell me more")
    agent = session.tree[root]
    assert agent.in_turn
    pending = await session.propose(root, f"/forget --ids {before[0]},{before[1]},{before[2]}")
    out = await session.answer(pending, Verdict.accept([before[0], before[2]]))
    assert out.lines[0].startswith("Accepted; applied when this turn ends: Forgot 2 messages")
    # The context changes before the turn ends: another accepted change removes one of
    # the reviewed messages first. Re-running the first command's text would now fail.
    first = await session.command(root, f"/forget --ids {before[1]}")
    assert first.lines[0].startswith("Accepted")
    second = await session.command(root, f"/forget --ids {before[2]},{before[3]}")
    assert second.lines[0].startswith("Accepted")
    assert agent.in_turn and await _events(session, root, "filter") == []
    assert await task
    filters = [e.payload["ids"] for e in await _events(session, root, "filter")]
    assert filters == [[before[0], before[2]], [before[1]], [before[2], before[3]]]
    now = await ids(session, root)
    assert [i for i in before if i in now] == before[4:]
    records = [e.payload for e in await _events(session, root, "command")]
    assert [r["output"] for r in records[-3:]] == [["Forgot 2 messages."], ["Forgot 1 message."],
                                                   ["Forgot 2 messages."]]


async def test_deferred_undos_walk_back_one_target_each(slower):
    session = slower
    root, before = await _three_turns(session)
    await session.command(root, f"/forget --ids {before[0]}")
    await session.command(root, f"/forget --ids {before[1]}")
    task = await session.say(root, "go on")
    assert session.tree[root].in_turn
    await session.command(root, "/undo")
    await session.command(root, "/undo")
    assert await task
    filters = [e.id for e in await _events(session, root, "filter")]
    undone = [e.payload["target"] for e in await _events(session, root, "undo")]
    assert undone == list(reversed(filters))
    assert set(before) <= set(await ids(session, root))


async def test_a_deferred_write_for_an_agent_killed_meanwhile_is_refused(slower):
    session = slower
    root = session.tree.root.id
    child = await fork(session, root, "--name kid a long task")
    assert session.tree[child].in_turn
    out = await session.command(child, "/clear")
    assert out.lines[0].startswith("Accepted")
    errors = []
    session.listeners.append(lambda n: errors.append(n) if type(n).__name__ == "ErrorNotice" else None)
    await session.command(root, "/kill kid")
    await session.wait_idle()
    assert await _events(session, child, "clear") == []
    assert any("deferred /clear" in n.message and "dead" in n.message for n in errors)


# -- /kill: nothing stops before the kill is on disk ---------------------------------------


async def test_a_kill_that_cannot_be_saved_leaves_the_agents_running(slower):
    session = slower
    root = session.tree.root.id
    child = await fork(session, root, "--name kid a long task")
    grandchild = await fork(session, child, "--name grandkid another long task")
    tasks = [session.tree[a].task for a in (child, grandchild)]
    assert all(t is not None and not t.done() for t in tasks)
    real_commit = session.commit

    async def commit(batch):
        if any(e.kind == "kill" for e in batch.events):
            raise StoreError("the disk is full; this change was not saved")
        return await real_commit(batch)

    session.commit = commit  # type: ignore[method-assign]
    with pytest.raises(StoreError, match="disk is full"):
        await session.command(root, "/kill kid")
    await asyncio.sleep(0.1)
    assert not any(t.done() for t in tasks)
    assert [session.tree[a].status for a in (child, grandchild)] == ["working", "working"]
    for agent in (root, child, grandchild):
        kinds = [e.kind for e in await session.store.events(agent)]
        assert "kill" not in kinds
    assert not [e for e in await _events(session, root, "command") if "/kill" in e.payload["text"]]
    session.commit = real_commit  # type: ignore[method-assign]
    assert all(await asyncio.gather(*tasks))  # they finish their replies
    for agent in (child, grandchild):
        replies = await _events(session, agent, "assistant")
        assert replies and not any(e.payload.get("interrupted") for e in replies)


# -- headless: --ids apply at once (no preview, SPEC §5); --dry-run only prints ----------


def test_run_applies_ids_without_a_preview_and_dry_run_only_prints(ikigai, tmp_path):
    db = tmp_path / "run.db"
    script = tmp_path / "s.txt"
    script.write_text("hello\n/forget --ids 1 --dry-run\n/forget --ids 1\n")
    done = ikigai("--db", str(db), "run", "--script", str(script))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[1].startswith("Would forget 1 message: context ")
    assert lines[2].startswith("  #1  user  ") and lines[2].endswith("hello")
    # the dry run said only that; the real one applies the ids it was given
    assert lines[3:] == ["Forgot 1 message."]
    log = ikigai("--db", str(db), "log", "--json")
    assert log.returncode == 0, log.stderr
    assert log.stdout.count('"filter"') == 1


async def test_undo_mid_turn_takes_back_a_change_waiting_for_the_same_turn(slower):
    """/clear then /undo while the agent works: the undo reverses that very /clear (as
    re-running the commands at the turn's end did), not an older change."""
    session = slower
    root, before = await _three_turns(session)
    await session.command(root, f"/forget --ids {before[0]}")
    task = await session.say(root, "go on")
    assert session.tree[root].in_turn
    await session.command(root, "/clear")
    out = await session.command(root, "/undo")
    assert out.lines == ["Accepted; applied when this turn ends: Undid /clear (not applied yet)."]
    out = await session.command(root, "/undo")  # the next one walks further back
    assert out.lines[0].startswith("Accepted; applied when this turn ends: Undid /forget --ids "
                                   f"{before[0]} (made 20"), out.lines
    assert "1 message is back in the context" in out.lines[0] and "event" not in out.lines[0]
    assert await task
    [clear] = await _events(session, root, "clear")
    [filt] = await _events(session, root, "filter")
    assert [e.payload["target"] for e in await _events(session, root, "undo")] == [clear.id, filt.id]
    now = await ids(session, root)
    assert set(before) <= set(now)
