"""validate_pairs, the check every provider test runs on request bodies: on what litellm
really sends for each format (a good exchange, a call without its result, a result
without its call, empty assistant content), and on raw bodies of each format."""

from __future__ import annotations

import asyncio

import tests.fakes.litellm_harness  # noqa: F401, I001  (first: sets litellm's environment)
import litellm
import pytest

from tests.fakes.litellm_harness import FORMATS, GUARD, MODELS, TOOLS, api_base
from tests.fakes.server import validate_pairs

TC = {"id": "call_9", "type": "function", "function": {"name": "slash", "arguments": '{"command":"mark"}'}}
CONVERSATIONS = {
    "good": [{"role": "user", "content": "hi"},
             {"role": "assistant", "content": None, "tool_calls": [TC]},
             {"role": "tool", "tool_call_id": "call_9", "content": "done"},
             {"role": "user", "content": "next"}],
    "no_result": [{"role": "user", "content": "hi"},
                  {"role": "assistant", "content": None, "tool_calls": [TC]},
                  {"role": "user", "content": "next"}],
    "no_call": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "sure"},
                {"role": "tool", "tool_call_id": "call_9", "content": "done"}],
    "empty_content": [{"role": "user", "content": "hi"},
                      {"role": "assistant", "content": "", "tool_calls": [TC]},
                      {"role": "tool", "tool_call_id": "call_9", "content": "done"}],
}
# What validate_pairs says about what litellm actually sent. None = litellm refused to send.
PAIRS_EXPECTED = {
    "openai": {"good": [], "no_result": ["without its result"], "no_call": ["without its call"],
               "empty_content": []},
    "anthropic": {"good": [], "no_result": ["without its tool_result"], "no_call": ["without its tool_use"],
                  "empty_content": ["content=None"]},
    "gemini": {"good": [], "no_result": ["without its functionResponse"], "no_call": None,
               "empty_content": []},
}


@pytest.mark.parametrize("fmt", FORMATS)
async def test_validate_pairs_on_what_litellm_sends(fake, fmt):
    for name, messages in CONVERSATIONS.items():
        expected = PAIRS_EXPECTED[fmt][name]
        before = len(fake.requests)
        try:
            await asyncio.wait_for(litellm.acompletion(
                model=MODELS[fmt], messages=messages, api_base=api_base(fake, fmt), api_key="test-key",
                timeout=5, tools=TOOLS, max_retries=0), GUARD)
        except litellm.APIConnectionError:
            assert expected is None, name
            assert len(fake.requests) == before
            continue
        problems = validate_pairs(fake.requests[-1])
        assert len(problems) == len(expected), (name, problems)
        for want, got in zip(expected, problems):
            assert want in got, (name, problems)


def test_validate_pairs_on_raw_bodies():
    ok_openai = {"messages": CONVERSATIONS["good"]}
    assert validate_pairs(ok_openai, "openai") == []
    assert validate_pairs(ok_openai) == []  # format guessed
    two = {"messages": [
        {"role": "assistant", "content": None, "tool_calls": [TC, dict(TC, id="call_10")]},
        {"role": "tool", "tool_call_id": "call_10", "content": "x"},
        {"role": "tool", "tool_call_id": "call_11", "content": "y"}]}
    assert sorted(validate_pairs(two, "openai")) == [
        "message 0: tool call 'call_9' without its result",
        "message 2: tool result 'call_11' without its call"]

    anth = {"messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "a", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "r"}]},
        {"role": "assistant", "content": ""}]}
    assert validate_pairs(anth, "anthropic") == ["message 3: assistant message with empty content"]
    anth["messages"][2]["content"][0]["tool_use_id"] = "t2"
    assert validate_pairs(anth, "anthropic") == [
        "message 2: tool_result 't2' without its tool_use",
        "message 1: tool_use 't1' without its tool_result",
        "message 3: assistant message with empty content"]

    gem = {"contents": [
        {"role": "user", "parts": [{"text": "hi"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "a", "args": {}}},
                                    {"functionCall": {"name": "a", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "a", "response": {}}}]},
        {"role": "user", "parts": [{"function_response": {"name": "b", "response": {}}}]}]}
    assert validate_pairs(gem) == [
        "content 1: functionCall 'a' without its functionResponse",
        "content 3: functionResponse 'b' without its functionCall"]
