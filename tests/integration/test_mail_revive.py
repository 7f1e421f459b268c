"""Agents come back (issue 27 item 7), over real litellm and the loopback fake: /revive
brings a killed agent back idle with its context as it was (a `revive` event the replay
and the agents table know, across a restart), its descendants stay dead, a turn the kill
cut can be /retry'd; /fork from a dead agent makes a live child with its context."""

from __future__ import annotations

import asyncio

import pytest

from ikigai_tui.core.errors import CommandError
from ikigai_tui.store.sqlite.rebuild import rebuild_agents
from tests.fakes.items import Reply
from tests.integration.mail_helpers import child, settled
from tests.integration.provider_helpers import close, conversation

pytestmark = pytest.mark.parametrize("fmt", ["openai"], indirect=True)


async def test_revive_brings_a_killed_agent_back_and_a_cut_turn_can_be_retried(make):
    h = await make()
    h.fake.queue(Reply(text="first"), Reply(text="never", stall_after=0, stall_seconds=5))
    await h.session.command(h.root, "/fork --name kid --mail manual")
    kid = child(h, "kid")
    await h.session.command(kid, "/fork --name grandkid")
    assert await h.say("remember plums", kid)
    turn = await h.session.say(kid, "the long job")
    await asyncio.sleep(0.3)
    await h.session.command(h.root, "/kill kid")
    await asyncio.gather(turn, return_exceptions=True)
    grandkid = child(h, "grandkid")
    context = await h.context(kid)
    out = await h.session.command(h.root, "/revive kid")
    assert out.lines == [f"Revived {h.session.tree.label(kid)}: idle, its context as it was. "
                         "Its last message was not answered: /retry there sends it again. "
                         "1 descendant stay dead (/revive each)."]
    assert h.session.tree[kid].status == "idle" and h.session.tree[grandkid].status == "dead"
    assert await h.context(kid) == context
    with pytest.raises(CommandError, match="is not dead"):
        await h.session.command(h.root, "/revive kid")
    h.fake.clear()
    h.fake.queue(Reply(text="done at last"))
    await h.session.command(kid, "/retry")
    await settled(h)
    sent = conversation(h.fake.requests[-1])
    assert [t for _r, t in sent] == ["remember plums", "first", "the long job"]
    assert [e.payload["content"] for e in await h.events(kid, "assistant")][-1] == "done at last"
    # The log says it: the agents table and the replay agree after a restart.
    assert {a.id: a.status for a in await h.store.agents()}[kid] == "idle"
    await close(h)
    again = await make(path=h.path)
    assert again.session.tree[kid].status == "idle" and again.session.tree[grandkid].dead
    assert not (await again.session.replayer(kid)).dead
    rebuilt = {a.id: a.status for a in await rebuild_agents(again.store)}  # from the events
    assert (rebuilt[kid], rebuilt[grandkid]) == ("idle", "dead")


async def test_fork_from_a_dead_agent_makes_a_live_child_with_its_context(make):
    h = await make()
    h.fake.queue(Reply(text="plums are purple"), Reply(text="carrying on"))
    await h.session.command(h.root, "/fork --name kid --mail manual")
    kid = child(h, "kid")
    assert await h.say("what colour are plums?", kid)
    await h.session.command(h.root, "/kill kid")
    with pytest.raises(CommandError, match="dead"):
        await h.session.command(kid, "/clear")
    out = await h.session.command(kid, "/fork --name heir carry on")
    heir = out.data
    await settled(h)
    assert h.session.tree[heir].status == "idle" and h.session.tree[kid].dead
    assert [t for _r, t in conversation(h.fake.requests[-1])] == [
        "what colour are plums?", "plums are purple", "carry on"]
