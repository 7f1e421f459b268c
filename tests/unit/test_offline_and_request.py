from __future__ import annotations

import json

from hypothesis import given, strategies as st

from ikigai_tui.core.provider import Request, TextDelta, ToolCall, Usage
from ikigai_tui.core.replay.replayer import Replayer
from ikigai_tui.core.replay.request import OMITTED, build_messages
from ikigai_tui.llm.offline import SNIPPET, OfflineProvider, _snippet, json_size, respond


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


# -- issue 23, item 14: the same figures without copying a big message whole -----------------

_TEXT = st.text(alphabet=st.sampled_from(list("ab \t\n\r\"\\/é\x00\x85\u2028中😀")), max_size=400)
_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
                     | _TEXT, lambda inner: st.lists(inner, max_size=4)
                     | st.dictionaries(_TEXT, inner, max_size=4), max_leaves=12)


@given(_JSON)
def test_the_offline_models_json_size_is_json_dumps_length(value):
    assert json_size(value) == len(json.dumps(value))


@given(_TEXT, st.integers(1, 300))
def test_the_offline_snippet_reads_only_the_start_yet_quotes_as_before(text, repeat):
    text = text * repeat  # long texts, whitespace runs across the prefixes it tries
    line = " ".join(text.split())
    whole = line if len(line) <= SNIPPET else line[: SNIPPET - 1] + "…"
    assert _snippet(text) == whole


@given(st.dictionaries(_TEXT, _JSON | _TEXT, max_size=4), _TEXT, st.integers(0, 400))
def test_the_stores_payload_bytes_are_its_json_text_encoded(payload, text, repeat):
    from ikigai_tui.store.sqlite.payload_json import dumps as _dumps, payload_bytes as _payload_bytes

    # Past a slice (64K characters): escaped a slice at a time.
    payload = {**payload, "content": (text or "é") * (70_000 // len(text or "é") + repeat)}
    assert _payload_bytes(payload) == _dumps(payload).encode()
