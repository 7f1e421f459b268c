"""A pruned-turn summary stands only for what the context still holds: /clear, /forget
and its /undo, /compact, a rewind that shows covered messages again each drop it until
the next turn's end rebuilds it; a child inherits what its parent sends; a /compact is
refused while a summary is being made, and one made while the context changed is not
recorded (its usage is). Through real litellm against the loopback fake."""

from __future__ import annotations

import asyncio
import json

import pytest

from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.compaction.pruned import HEADING, KIND
from ikigai_tui.core.compaction.proposal import CompactVerdict
from tests.fakes.server import Reply
from tests.integration.pruned_helpers import (
    WORDS, Provider, harness, is_pruned_request, notes, pruned_ids, sent_ids, summarised,
    system_of, turns,
)

pytestmark = pytest.mark.parametrize("fmt", ["openai"], indirect=True)


async def test_clear_drops_the_summary_and_the_next_one_covers_only_new_turns(make, fake, fmt):
    h, provider = await summarised(make, fake)
    await h.session.command(h.root, "/clear")
    assert (await h.session.plan(h.root)).pruned is None
    before = len(provider.turns)
    await turns(h, 10, start=10)
    assert all(HEADING not in system_of(r) for r in provider.turns[before: before + 3])
    cleared_at = (await h.events(kind="clear"))[-1].id
    after = [e for e in await h.events(kind=KIND) if e.id > cleared_at]
    assert after and after[0].payload["previous"] is None
    assert all(e.payload["ranges"][0][0] > cleared_at for e in after)
    plan = await h.session.plan(h.root)
    assert plan.pruned is not None and plan.pruned.summary.event_id == after[-1].id


async def test_forget_of_a_covered_message_and_its_undo_drop_the_summary(make, fake, fmt):
    h = await harness(make)
    provider = Provider()
    fake.respond(provider)
    await turns(h, 10)
    summary = (await h.session.plan(h.root)).pruned.summary
    covered = (await pruned_ids(h))[: summary.covered]
    await h.session.command(h.root, f"/forget --ids {covered[2]}")
    assert (await h.session.plan(h.root)).pruned is None  # it would describe a forgotten message
    await turns(h, 1, start=10)
    rebuilt = (await h.events(kind=KIND))[-1]
    assert rebuilt.payload["previous"] is None  # from scratch: the pruned messages as they are
    assert covered[2] not in sent_ids(provider.requests[-1])
    plan = await h.session.plan(h.root)
    assert plan.pruned is not None and plan.pruned.summary.event_id == rebuilt.id
    # /undo brings the forgotten message back among the covered ones: not described, dropped.
    await h.session.command(h.root, "/undo")
    assert covered[2] in [k for k, _, _ in await h.context()]
    assert (await h.session.plan(h.root)).pruned is None
    await turns(h, 1, start=11)
    again = (await h.events(kind=KIND))[-1]
    assert again.id != rebuilt.id and covered[2] in sent_ids(provider.requests[-1])


async def test_compact_drops_the_summary(make, fake, fmt):
    h, provider = await summarised(make, fake)

    async def accept(_proposal):
        return CompactVerdict(True)

    await h.session.command(h.root, "/compact --keep 1", review=accept)
    assert await h.events(kind="compact")
    assert (await h.session.plan(h.root)).pruned is None


async def test_a_window_that_shows_covered_messages_again_drops_the_summary(make, fake, fmt):
    h, provider = await summarised(make, fake)
    await h.session.command(h.root, "/mark here")
    await turns(h, 3, start=10)
    await h.session.command(h.root, "/rewind here")
    plan = await h.session.plan(h.root)
    # The rewind took 3 turns out: the window reaches back into the covered messages.
    assert plan.window.start_index < (await h.events(kind=KIND))[-1].payload["messages"]
    assert plan.pruned is None  # the newest summary covers messages the window shows


async def test_a_child_inherits_what_its_parent_sends(make, fake, fmt):
    h = await harness(make)
    provider = Provider()
    fake.respond(provider)
    await turns(h, 10)
    parent = await h.session.plan(h.root)
    assert parent.pruned is not None
    result = await h.session.command(h.root, "/fork --name kid")
    child = result.data
    plan = await h.session.plan(child)
    assert plan.pruned is not None and plan.pruned.summary.event_id == parent.pruned.summary.event_id
    assert plan.pruned.summary.agent_id == h.root
    before = len(provider.turns)
    assert await h.say("hello child", agent_id=child)
    assert HEADING in system_of(provider.turns[before])
    assert "summary number" in system_of(provider.turns[before])
    # Later summaries of the parent are not the child's; the child makes its own.
    await turns(h, 2, start=10)
    assert (await h.session.plan(child)).pruned.summary.event_id == parent.pruned.summary.event_id
    for n in range(3):
        assert await h.say(f"child step {n}: {WORDS}", agent_id=child)
    own = await h.events(agent_id=child, kind=KIND)
    assert own and own[0].payload["previous"] == parent.pruned.summary.event_id
    # A child forked from a mark after the covered messages inherits none of them.
    await h.session.command(h.root, "/mark brief")
    await turns(h, 1, start=30)
    late = (await h.session.command(h.root, "/fork brief")).data
    assert (await h.session.plan(late)).pruned is None


async def test_a_compaction_is_refused_while_a_summary_is_being_made(make, fake, fmt):
    h = await harness(make)
    provider = Provider()
    fake.respond(provider)
    n = 0
    while not provider.requests:  # until the window prunes and a first summary is made
        assert await h.say(f"step {n}: {WORDS}")
        n += 1
    made = len(provider.requests)
    slow = Provider()
    slow.requests = provider.requests

    def respond(received):
        reply = slow(received)
        if is_pruned_request(received):
            return Reply(text="## Goal\nslow summary", chunk_size=2, chunk_delay=0.05)
        return reply

    fake.respond(respond)
    task = await h.session.say(h.root, f"step {n}: {WORDS}")
    while len(provider.requests) == made:
        await asyncio.sleep(0.01)
    with pytest.raises(CommandError, match="pruned turns is being made"):
        await h.session.command(h.root, "/compact --keep 1")
    assert await asyncio.wait_for(task, 20)
    assert (await h.events(kind=KIND))[-1].payload["summary"] == "## Goal\nslow summary"
    assert await h.events(kind="compact") == []


async def test_a_summary_made_while_the_context_changed_is_not_recorded(make, fake, fmt):
    h = await harness(make)
    provider = Provider()
    fake.respond(provider)
    n = 0
    while not provider.requests:
        assert await h.say(f"step {n}: {WORDS}")
        n += 1
    made, events = len(provider.requests), len(await h.events(kind=KIND))

    def respond(received):
        if is_pruned_request(received):
            provider.requests.append(received)
            return Reply(text="## Goal\nstale", chunk_size=2, chunk_delay=0.05, usage=(50, 5))
        return Reply(text="ok", usage=(len(json.dumps(received.body)) // 4, 5))

    fake.respond(respond)
    task = await h.session.say(h.root, f"step {n}: {WORDS}")
    while len(provider.requests) == made:
        await asyncio.sleep(0.01)
    first = (await h.context())[0][0]
    await h.session.command(h.root, f"/forget --ids {first}")  # while it is being made
    assert await asyncio.wait_for(task, 20)
    assert len(await h.events(kind=KIND)) == events  # stale: not recorded
    spent = [e.payload for e in await h.events(kind="usage")
             if e.payload.get("purpose") == "pruned_summary"]
    assert len(spent) == events + 1  # what the request cost is kept all the same
    assert not [t for t in notes(h, "error")]
