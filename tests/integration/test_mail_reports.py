"""Results come home (issue 27 item 3), over real litellm and the loopback fake: a child
forked with --report mails its final reply (or its failure) to its parent, marked a
report, and wakes a parent on "wake"; /wait AGENT... returns the agents' latest replies,
times out, refuses itself and its ancestors, and a cancelled wait writes nothing; the
parent's LLM forks two children through the slash tool and waits for both."""

from __future__ import annotations

import asyncio

import pytest

from ikigai_tui.core.errors import CommandError
from tests.fakes.items import Fault, Reply
from tests.integration.mail_helpers import answer_by, child, settled, wakes
from tests.integration.provider_helpers import conversation, exchange, slash

pytestmark = pytest.mark.parametrize("fmt", ["openai"], indirect=True)


async def _mails(h, agent_id: str) -> list[dict]:
    return [e.payload for e in await h.events(agent_id, "mail")]


async def test_a_report_child_mails_its_final_reply_home_and_wakes_its_parent(make):
    h = await make()
    await h.session.command(h.root, "/mail wake")
    h.fake.respond(answer_by(lambda role, text: Reply(text="the answer is 42")
                             if text == "find the answer" else Reply(text="thanks")))
    await h.session.command(h.root, "/fork --name kid --report find the answer")
    await settled(h)
    kid = child(h, "kid")
    label = h.session.tree.label(kid)
    assert await _mails(h, h.root) == [{"from": kid, "from_label": label,
                                        "text": "the answer is 42", "report": True, "ok": True}]
    [woke] = await wakes(h, h.root)
    assert woke["output"] == ["1 mail read into the context."]
    assert conversation(h.fake.requests[-1])[-1] == ("user", f"Report from {label}: the answer is 42")
    # A message typed to the child is not its work from home: its reply stays there.
    await h.say("and how are you?", kid)
    await settled(h)
    assert len(await _mails(h, h.root)) == 1


async def test_a_failed_child_reports_its_failure(make):
    h = await make()
    h.fake.queue(Fault.http(400, {"error": {"message": "no such thing"}}))
    await h.session.command(h.root, "/fork --name kid --report try it")
    await settled(h)
    [report] = await _mails(h, h.root)
    assert report["report"] is True and report["ok"] is False and report["text"]
    assert "/retry" in report["text"]
    assert await wakes(h, h.root) == []  # the root is on manual: the report waits
    out = await h.session.command(h.root, "/check-mail")
    assert out.lines == ["1 mail read into the context."]
    messages = await h.context()
    assert messages[-1][2]["content"].startswith(
        f"Report (failed) from {h.session.tree.label(child(h, 'kid'))}: ")


async def test_wait_returns_the_latest_replies(make):
    h = await make()
    h.fake.respond(answer_by(lambda role, text: Reply(text=f"done with {text}" + "!" * (
        3000 if text == "b-work" else 0), chunk_size=400)))
    await h.session.command(h.root, "/fork --name a a-work")
    await h.session.command(h.root, "/fork --name b b-work")
    out = await asyncio.wait_for(h.session.command(h.root, "/wait a b"), 20)
    label = h.session.tree.label
    a, b = child(h, "a"), child(h, "b")
    assert out.lines[:3] == [f"{label(a)} (idle):", "  done with a-work", f"{label(b)} (idle):"]
    assert out.lines[3] == "  done with b-work" + "!" * (2000 - len("done with b-work"))
    reply_id = [e.id for e in await h.events(b, "assistant")][-1]
    assert out.lines[4] == (f"  [... {len('done with b-work') + 3000 - 2000} more characters: "
                            f"the whole reply is message #{reply_id} of {label(b)}]")


async def test_wait_times_out_refuses_deadlocks_and_a_cancel_writes_nothing(make):
    h = await make()
    h.fake.queue(Reply(text="slow", stall_after=0, stall_seconds=5))
    await h.session.command(h.root, "/fork --name slow go")
    slow = child(h, "slow")
    out = await h.session.command(h.root, "/wait slow --timeout 0.3")
    assert out.lines == ["Timed out after 0.3 s: 1 of 1 still working.",
                         f"{h.session.tree.label(slow)} (still working):", "  (no reply yet)"]
    for ref, why in ((h.root[:8], "cannot wait for itself"), ("slow", "cannot wait for itself")):
        agent = h.root if ref != "slow" else slow
        with pytest.raises(CommandError, match=why):
            await h.session.command(agent, f"/wait {ref}")
    with pytest.raises(CommandError, match="is an ancestor of this agent"):
        await h.session.command(slow, f"/wait {h.root[:8]}")
    with pytest.raises(CommandError, match="--timeout takes seconds"):
        await h.session.command(h.root, "/wait slow --timeout soon")
    before = len(await h.events())
    waiting = asyncio.ensure_future(h.session.command(h.root, "/wait slow"))
    await asyncio.sleep(0.3)
    assert not waiting.done()
    waiting.cancel()  # Esc in the full screen
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert len(await h.events()) == before
    await h.session.cancel_turns([slow])


async def test_the_llm_forks_two_children_and_waits_for_both(make):
    h = await make()

    def rule(role: str, text: str) -> Reply | None:
        if text == "split the work":
            return Reply(tool_calls=[slash("fork", "--report --name left count the apples"),
                                     slash("fork", "--report --name right count the pears")])
        if text.startswith("count the"):
            return Reply(text=f"{text.split()[-1]}: 7", chunk_size=3, chunk_delay=0.02)
        if role == "tool" and "Forked" in text:
            return Reply(tool_calls=[slash("wait", "left right")])
        return Reply(text="all done")

    h.fake.respond(answer_by(rule))
    assert await h.say("split the work")
    await settled(h)
    left, right = child(h, "left"), child(h, "right")
    waited = next(r for r in h.fake.requests if exchange(r)[1] and "(idle)" in exchange(r)[1][-1][1])
    label = h.session.tree.label
    assert exchange(waited)[1][-1][1] == "\n".join([
        f"{label(left)} (idle):", "  apples: 7", f"{label(right)} (idle):", "  pears: 7"])
    # The two reports are in that result: read already, they do not come again.
    assert [m["report"] for m in await _mails(h, h.root)] == [True, True]
    assert h.session.tree[h.root].unread == 0
    assert [e.payload["content"] for e in await h.events(h.root, "assistant")][-1] == "all done"
