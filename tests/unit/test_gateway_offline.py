"""The gateway over the offline model: side requests answer deterministically, a
required tool is called, and the one retry policy and limit live in the gateway."""

from __future__ import annotations

import asyncio
import json

import pytest

from ikigai_tui.core.gateway import Gateway, RetryPolicy, Waiting
from ikigai_tui.core.provider import ProviderError, Request, Retrying, TextDelta, TransientError
from ikigai_tui.core.tools import tool_schemas
from ikigai_tui.llm.offline import respond
from ikigai_tui.llm.providers import Providers

ASK = [{"role": "user", "content": "Which command?"}]


async def test_offline_side_request_calls_the_required_tool():
    gw = Gateway(Providers())
    result = await gw.complete("matcher", "offline", ASK, tool_schemas(), tool_choice="required")
    (call,) = result.tool_calls
    args = json.loads(call.arguments)
    assert call.name == "slash" and args == {"command": tool_schemas()[0]["function"][
        "parameters"]["properties"]["command"]["enum"][0]}
    assert result == await gw.complete("matcher", "offline", ASK, tool_schemas(), tool_choice="required")
    named = {"type": "function", "function": {"name": "slash"}}
    assert (await gw.complete("m", "offline", ASK, tool_schemas(), named)).tool_calls[0].name == "slash"


async def test_offline_side_request_answers_text_within_max_tokens():
    gw = Gateway(Providers())
    free = await gw.complete("summary", "offline", ASK, tool_schemas())
    assert free.tool_calls == [] and free.text.startswith("Offline model here")
    short = await gw.complete("summary", "offline", ASK, max_tokens=3)
    assert short.text == free.text[:12] and short.usage is not None


def test_tool_choice_none_or_auto_forces_nothing():
    for choice in (None, "auto", "none"):
        text, calls = respond(Request("offline", "", ASK, tool_schemas(), choice))
        assert text and calls == []


class _Flaky:
    """A provider failing transiently `failures` times, then answering."""

    offline = True

    def __init__(self, failures: int) -> None:
        self.model, self.failures, self.calls = "flaky/x", failures, 0

    async def stream(self, request):
        self.calls += 1
        if self.calls <= self.failures:
            raise TransientError("flaky is overloaded", retry_after=0.5, reason="overloaded")
        yield TextDelta("fine")


class _Factory:
    def __init__(self, provider) -> None:
        self.provider = provider

    def get(self, model):
        return self.provider


async def test_retry_policy_is_the_gateways():
    slept: list[float] = []

    async def sleep(delay):
        slept.append(delay)

    flaky = _Flaky(2)
    gw = Gateway(_Factory(flaky), retry=RetryPolicy(max_retries=2, base_delay=0.01), sleep=sleep)
    seen: list = []
    assert (await gw.complete("x", "flaky/x", ASK, progress=seen.append)).text == "fine"
    assert [(p.attempt, p.reason) for p in seen if isinstance(p, Retrying)] == [
        (1, "overloaded"), (2, "overloaded")]
    assert slept == [0.5, 0.5]  # the server's retry-after wins over a shorter backoff
    gw = Gateway(_Factory(_Flaky(5)), retry=RetryPolicy(max_retries=1, base_delay=0.01), sleep=sleep)
    with pytest.raises(ProviderError, match="^flaky is overloaded after 2 attempts$"):
        await gw.complete("x", "flaky/x", ASK)


async def test_one_slot_per_provider_is_shared():
    gate = asyncio.Event()

    class _Held:
        offline, model = True, "p/x"

        async def stream(self, request):
            await gate.wait()
            yield TextDelta(request.messages[0]["content"])

    gw = Gateway(_Factory(_Held()), concurrency=1)
    seen: list = []
    first = asyncio.ensure_future(gw.complete("a", "p/x", [{"role": "user", "content": "1"}]))
    await asyncio.sleep(0)
    second = asyncio.ensure_future(gw.complete("b", "p/y", [{"role": "user", "content": "2"}],
                                               progress=seen.append))
    await asyncio.sleep(0.01)
    assert seen == [Waiting("b", "p")] and gw.slot("p/z").locked()
    gate.set()
    assert [(await first).text, (await second).text] == ["1", "2"]
    assert Gateway(Providers()).concurrency == 4
    assert Gateway(Providers(concurrency=2)).concurrency == 2


async def test_the_configured_limit_reaches_the_sessions_gateway(tmp_path):
    from ikigai_tui.config import load
    from ikigai_tui.runtime import close_session, open_session

    config = load(db=str(tmp_path / "c.db"), config_path=str(tmp_path / "none.toml"),
                  env={"IKIGAI_CONCURRENCY": "2"})
    session = await open_session(config)
    try:
        assert session.gateway.concurrency == 2
    finally:
        await close_session(session)
