"""/btw QUESTION (issue 27 item 5) through real litellm and the loopback fake: the side
request holds the agent's context exactly as the next request would (system prompt,
pins, messages) plus the question, without tools; the exchange is logged (a `btw` event,
its usage counted) and no later request holds it: not the next turn, not a child forked
afterwards, not after a restart. During a turn it asks about the committed context; a
provider failure is one line and writes nothing. The request bodies prove it."""

from __future__ import annotations

import asyncio
import json

import pytest

from ikigai_tui.cli.output import context_data
from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.notices import SideDelta
from tests.fakes.server import Fault, Reply
from tests.integration.provider_helpers import close, conversation

QUESTION = "side-question-41 what is the plan"
ANSWER = "side-answer-77 the plan is simple"


def _system(rec) -> str:
    body = rec.body
    if rec.format == "openai":
        return json.dumps([m for m in body["messages"] if m["role"] in ("system", "developer")])
    if rec.format == "anthropic":
        return json.dumps(body.get("system"))
    return json.dumps(body.get("system_instruction") or body.get("systemInstruction"))


def _has_tools(rec) -> bool:
    return bool(rec.body.get("tools"))


async def test_btw_holds_the_context_and_the_question_and_never_enters_a_request(make, fmt):
    h = await make()
    await h.session.command(h.root, "/pin always answer in English")
    h.fake.queue(Reply(text="first answer"))
    assert await h.say("first question")
    before = await context_data(h.session, h.session.tree[h.root])
    usage_before = await h.session.usages.totals(h.root)

    h.fake.queue(Reply(text=ANSWER, usage=(321, 9)))
    result = await h.session.command(h.root, f"/btw {QUESTION}")
    side = h.fake.requests[-1]
    assert result.lines[0] == "Side answer (not in any context):"
    assert "\n".join(result.lines[1:]) == ANSWER
    assert "".join(n.text for n in h.of(SideDelta)) == ANSWER
    assert not _has_tools(side)
    assert conversation(side)[-1] == ("user", QUESTION)

    # The log keeps it as a side exchange, its tokens in the agent's usage; the context
    # (what `context --json` shows) is as it was.
    (event,) = await h.events(kind="btw")
    assert event.payload == {"question": QUESTION, "answer": ANSWER, "model": h.model}
    usage = await h.session.usages.totals(h.root)
    assert (usage.input_tokens - usage_before.input_tokens,
            usage.output_tokens - usage_before.output_tokens) == (321, 9)
    after = await context_data(h.session, h.session.tree[h.root])
    assert after.pop("usage") != before.pop("usage")  # the one thing a /btw changes there
    assert after == before

    h.fake.queue(Reply(text="second answer"))
    assert await h.say("second question")
    turn = h.fake.requests[-1]
    # The side request was the turn's request with the question in the new message's place.
    assert conversation(side)[:-1] == conversation(turn)[:-1]
    assert _system(side) == _system(turn) and "always answer in English" in _system(side)
    assert _has_tools(turn)
    body = json.dumps(turn.body)
    assert "side-question-41" not in body and "side-answer-77" not in body


async def test_btw_stays_out_of_a_child_and_after_a_restart(make, fmt, tmp_path):
    if fmt != "openai":
        pytest.skip("one wire format is enough: the replay decides, not the provider")
    path = tmp_path / "restart.db"
    h = await make(path=path)
    h.fake.queue(Reply(text="first answer"))
    assert await h.say("first question")
    h.fake.queue(Reply(text=ANSWER))
    await h.session.command(h.root, f"/btw {QUESTION}")
    await h.session.command(h.root, "/fork --name kid")
    kid = next(a.id for a in h.session.tree if a.name == "kid")
    h.fake.queue(Reply(text="kid answer"))
    assert await h.say("kid question", kid)
    assert "side-question-41" not in json.dumps(h.fake.requests[-1].body)
    await close(h)

    again = await make(path=path)
    again.fake.queue(Reply(text="after restart"))
    assert await again.say("after the restart")
    body = json.dumps(again.fake.requests[-1].body)
    assert "first question" in body  # the context came back...
    assert "side-question-41" not in body and "side-answer-77" not in body  # ...not the side


async def test_btw_failure_is_one_line_and_writes_nothing(make, fmt):
    h = await make()
    h.fake.queue(Reply(text="first answer"))
    assert await h.say("first question")
    count = len(await h.events())
    h.fake.queue(Fault.auth())
    with pytest.raises(CommandError) as failed:
        await h.session.command(h.root, f"/btw {QUESTION}")
    assert "\n" not in str(failed.value) and "nothing was written" in str(failed.value)
    assert len(await h.events()) == count
    with pytest.raises(CommandError, match="missing QUESTION"):
        await h.session.command(h.root, "/btw   ")
    assert len(await h.events()) == count


async def test_btw_during_a_turn_asks_about_the_committed_context(make, fmt):
    if fmt == "gemini":
        pytest.skip("two wire formats are enough for the ordering")
    h = await make()
    h.fake.queue(Reply(text="first answer"))
    assert await h.say("first question")

    def answer(rec):
        return Reply(text=ANSWER) if QUESTION in json.dumps(rec.body) else None

    h.fake.respond(answer)
    h.fake.queue(Reply(text="a slow reply in many words " * 4, chunk_size=4, chunk_delay=0.05))
    task = await h.session.say(h.root, "running question")
    for _ in range(200):  # the turn's request is in flight, its reply streaming
        if any("running question" in json.dumps(r.body) for r in h.fake.requests):
            break
        await asyncio.sleep(0.01)
    assert h.session.tree[h.root].in_turn
    result = await h.session.command(h.root, f"/btw {QUESTION}")
    assert "\n".join(result.lines[1:]) == ANSWER
    assert not task.done()  # answered while the turn ran
    side = next(r for r in h.fake.requests if QUESTION in json.dumps(r.body))
    # The committed context: the first exchange and the message the turn answers now
    # (Anthropic's litellm joins two user messages in a row into one of two blocks).
    texts = [t for _, t in conversation(side)]
    assert texts[:2] == ["first question", "first answer"]
    assert "".join(texts[2:]) == "running question" + QUESTION
    assert await asyncio.wait_for(task, 20)
    h.fake.queue(Reply(text="next"))
    assert await h.say("next question")
    assert "side-question-41" not in json.dumps(h.fake.requests[-1].body)
