"""The LLM gateway (issue 11): side requests outside the conversation, through real
litellm against the loopback fake, sharing the per-provider limit with the turns."""

from __future__ import annotations

import asyncio

import pytest

from ikigai_tui.core.gateway import Gateway, RequestCancelled, Waiting
from ikigai_tui.core.provider import Retrying
from ikigai_tui.core.tools import tool_schemas
from ikigai_tui.llm.providers import Providers
from tests.fakes.server import Fault, Reply
from tests.integration.provider_helpers import MODELS, base_for

ASK = [{"role": "user", "content": "Which command?"}]
# How each wire format says "a tool call is required" and "at most 50 tokens".
REQUIRED = {
    "openai": lambda b: b["tool_choice"] == "required" and b["max_tokens"] == 50,
    "anthropic": lambda b: b["tool_choice"] == {"type": "any"} and b["max_tokens"] == 50,
    "gemini": lambda b: (b["toolConfig"]["functionCallingConfig"]["mode"] == "ANY"
                         and b["generationConfig"]["max_output_tokens"] == 50),
}


def gateway(fake, fmt, **options) -> Gateway:
    settings = dict(api_base=base_for(fake, fmt), timeout=5, max_retries=2, retry_base_delay=0.01)
    settings.update(options)
    return Gateway(Providers(**settings))


async def test_side_request_with_a_required_tool_call(fake, fmt):
    fake.queue(Reply(tool_calls=[("slash", {"command": "mark", "args": "A"})], usage=(30, 7)))
    result = await gateway(fake, fmt).complete(
        "matcher", MODELS[fmt], ASK, tool_schemas(), tool_choice="required", max_tokens=50,
        system="Pick one.")
    assert [(c.name, c.arguments) for c in result.tool_calls] == [
        ("slash", '{"command": "mark", "args": "A"}')]
    assert result.text == "" and result.usage == (30, 7)
    (received,) = fake.requests
    assert REQUIRED[fmt](received.body), received.body
    assert "Pick one." in str(received.body) and "Which command?" in str(received.body)


async def test_side_request_text_and_retry_progress(fake, fmt):
    fake.queue(Fault.server_error(), Reply(text="a short answer"))
    seen = []
    result = await gateway(fake, fmt).complete("summary", MODELS[fmt], ASK, progress=seen.append)
    assert result.text == "a short answer" and result.tool_calls == []
    assert [type(p) for p in seen] == [Retrying] and len(fake.requests) == 2
    body = fake.requests[-1].body
    assert "tool_choice" not in body and "toolConfig" not in body


@pytest.mark.parametrize("fmt", ["openai"], indirect=True)
async def test_side_request_waits_for_the_turn_holding_the_only_slot(make, fake, fmt):
    """Limit 1 per provider: a side request made while a turn streams is sent only once
    the turn's stream has ended, and says it is waiting."""
    h = await make(concurrency=1)
    fake.queue(Reply(text="one two three four five six", chunk_size=4, chunk_delay=0.1),
               Reply(text="side answer"))
    turn = await h.session.say(h.root, "hello")
    while not fake.requests:
        await asyncio.sleep(0.01)
    seen: list = []
    side = asyncio.ensure_future(h.session.gateway.complete(
        "matcher", h.model, ASK, progress=seen.append))
    await asyncio.sleep(0.3)
    assert not side.done() and len(fake.requests) == 1  # still held back by the turn
    assert seen == [Waiting("matcher", "openai")]
    assert await asyncio.wait_for(turn, 20)
    assert (await asyncio.wait_for(side, 20)).text == "side answer"
    assert len(fake.requests) == 2
    assert (await h.events(kind="assistant"))[-1].payload["content"] == "one two three four five six"


@pytest.mark.parametrize("fmt", ["openai"], indirect=True)
async def test_turn_waits_for_the_side_request_holding_the_only_slot(make, fake, fmt):
    h = await make(concurrency=1)
    fake.queue(Reply(text="slow side answer", chunk_size=3, chunk_delay=0.1), Reply(text="turn"))
    side = asyncio.ensure_future(h.session.gateway.complete("matcher", h.model, ASK))
    while not fake.requests:
        await asyncio.sleep(0.01)
    turn = await h.session.say(h.root, "hello")
    await asyncio.sleep(0.2)
    assert not turn.done() and len(fake.requests) == 1
    assert (await asyncio.wait_for(side, 20)).text == "slow side answer"
    assert await asyncio.wait_for(turn, 20)
    assert len(fake.requests) == 2


@pytest.mark.parametrize("fmt", ["openai", "anthropic"], indirect=True)
async def test_cancelled_side_request_frees_its_slot(fake, fmt):
    gw = gateway(fake, fmt, concurrency=1)
    fake.queue(Reply(text="never finished", stall_after=1, stall_seconds=10), Reply(text="next"))
    stop = asyncio.Event()
    side = asyncio.ensure_future(gw.complete("matcher", MODELS[fmt], ASK, cancellation=stop))
    while not fake.requests:
        await asyncio.sleep(0.01)
    stop.set()
    with pytest.raises(RequestCancelled):
        await asyncio.wait_for(side, 3)
    assert not gw.slot(MODELS[fmt]).locked()
    assert (await asyncio.wait_for(gw.complete("other", MODELS[fmt], ASK), 10)).text == "next"
    # Already cancelled: nothing is sent.
    with pytest.raises(RequestCancelled):
        await gw.complete("late", MODELS[fmt], ASK, cancellation=stop)
    assert len(fake.requests) == 2
