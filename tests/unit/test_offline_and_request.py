from __future__ import annotations

import json

from ikigai_tui.core.provider import Request, TextDelta, ToolCall, Usage
from ikigai_tui.core.replay import Replayer
from ikigai_tui.core.request import OMITTED, build_messages
from ikigai_tui.llm.offline import OfflineProvider, respond


def _rows(*items):
    return [(i, kind, payload) for i, (kind, payload) in enumerate(items, 1)]


async def _collect(provider, request):
    return [item async for item in provider.stream(request)]


async def test_offline_replies_are_deterministic_and_describe_the_context():
    request = Request("offline", "sys", [{"role": "user", "content": "hi"},
                                         {"role": "assistant", "content": "yo"},
                                         {"role": "user", "content": "second"}])
    first = await _collect(OfflineProvider(), request)
    second = await _collect(OfflineProvider(), request)
    assert first == second
    text = "".join(i.text for i in first if isinstance(i, TextDelta))
    assert '"second"' in text and "3 messages (2 from you)" in text and '"hi"' in text
    assert isinstance(first[-1], Usage) and first[-1].input_tokens > 0


def test_offline_slash_lines_become_tool_calls():
    text, calls = respond(Request("offline", "", [{"role": "user", "content": "@slash mark A\n@slash marks"}]))
    assert text == ""
    assert [json.loads(c.arguments) for c in calls] == [
        {"command": "mark", "args": "A"}, {"command": "marks", "args": ""}]
    assert len({c.call_id for c in calls}) == 2 and all(isinstance(c, ToolCall) for c in calls)


def test_request_pairs_calls_with_results_and_sends_content_none():
    rows = _rows(
        ("user", {"content": "go"}),
        ("tool_call", {"call_id": "a", "name": "slash", "arguments": "{}"}),
        ("tool_call", {"call_id": "b", "name": "slash", "arguments": "{}"}),
        ("tool_result", {"call_id": "a", "call_event": 2, "content": "A"}),
        ("tool_result", {"call_id": "b", "call_event": 3, "content": "B"}),
        ("assistant", {"content": "done"}),
    )
    messages = build_messages(Replayer.from_rows(rows))
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool", "assistant"]
    assert messages[1]["content"] is None
    assert [c["id"] for c in messages[1]["tool_calls"]] == ["a", "b"]


def test_request_never_sends_half_a_tool_pair():
    rows = _rows(
        ("user", {"content": "go"}),
        ("assistant", {"content": "calling"}),
        ("tool_call", {"call_id": "a", "name": "slash", "arguments": "{}"}),  # no result yet
    )
    messages = build_messages(Replayer.from_rows(rows))
    assert messages == [{"role": "user", "content": "go"}, {"role": "assistant", "content": "calling"}]
    orphan = _rows(("user", {"content": "x"}), ("tool_result", {"call_id": "z", "call_event": 99, "content": "r"}))
    assert [m["role"] for m in build_messages(Replayer.from_rows(orphan))] == ["user"]


def test_request_starting_with_a_non_user_message_is_still_valid():
    rows = _rows(("assistant", {"content": "I was forked from a mark"}))
    messages = build_messages(Replayer.from_rows(rows))
    assert messages[0] == {"role": "user", "content": OMITTED}
    assert messages[1]["role"] == "assistant"
