"""Checks of a received request body: no tool result without its call, nor the reverse."""

from __future__ import annotations

from tests.fakes.items import ANTHROPIC, GEMINI, OPENAI, Received


# --------------------------------------------------------------------------- validation


def _guess_format(body: dict) -> str:
    if "contents" in body:
        return GEMINI
    msgs = body.get("messages") or []
    for m in msgs:
        if m.get("role") in ("tool", "system", "developer") or m.get("tool_calls"):
            return OPENAI
        c = m.get("content")
        if isinstance(c, list) and any(isinstance(b, dict) and b.get("type") in ("tool_use", "tool_result")
                                       for b in c):
            return ANTHROPIC
    return ANTHROPIC if "system" in body else OPENAI  # top-level "system" is Anthropic's


def validate_pairs(received: Received | dict, format: str | None = None) -> list[str]:  # noqa: A002
    """Tool call / tool result pairing problems in a request body. Empty list = valid.

    ``received`` is a Received (its format is used) or a raw body dict (format given or guessed).
    """
    if isinstance(received, Received):
        body, fmt = received.body, format or received.format
    else:
        body, fmt = received, format or _guess_format(received)
    if fmt == OPENAI:
        return _validate_openai(body.get("messages") or [])
    if fmt == ANTHROPIC:
        return _validate_anthropic(body.get("messages") or [])
    if fmt == GEMINI:
        return _validate_gemini(body.get("contents") or [])
    raise ValueError(f"unknown format {fmt!r}")


def _validate_openai(msgs: list) -> list[str]:
    problems: list[str] = []
    i = 0
    while i < len(msgs):
        m = msgs[i]
        role = m.get("role")
        if role == "assistant" and m.get("tool_calls"):
            ids = [tc.get("id") for tc in m["tool_calls"]]
            for dup in {x for x in ids if ids.count(x) > 1}:
                problems.append(f"message {i}: duplicate tool call id {dup!r}")
            pending = list(dict.fromkeys(ids))
            j = i + 1
            while j < len(msgs) and msgs[j].get("role") == "tool":
                tcid = msgs[j].get("tool_call_id")
                if tcid in pending:
                    pending.remove(tcid)
                else:
                    problems.append(f"message {j}: tool result {tcid!r} without its call")
                j += 1
            for tcid in pending:
                problems.append(f"message {i}: tool call {tcid!r} without its result")
            i = j
            continue
        if role == "tool":
            problems.append(f"message {i}: tool result {m.get('tool_call_id')!r} without its call")
        i += 1
    return problems


def _blocks(content) -> list[dict]:
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


# litellm 1.105 replaces an assistant content "" by this text block when it converts to Anthropic.
_LITELLM_EMPTY_PLACEHOLDER = "[System: Empty message content sanitised"


def _validate_anthropic(msgs: list) -> list[str]:
    problems: list[str] = []
    expected: list = []  # tool_use ids from the previous assistant message
    prev_index = -1
    for i, m in enumerate(msgs):
        role, content = m.get("role"), m.get("content")
        blocks = _blocks(content)
        if role == "assistant":
            if expected:
                for tid in expected:
                    problems.append(f"message {prev_index}: tool_use {tid!r} without its tool_result")
            if content == "" or (isinstance(content, list) and not content):
                problems.append(f"message {i}: assistant message with empty content")
            for b in blocks:
                if b.get("type") == "text" and b.get("text", "") == "":
                    problems.append(f"message {i}: assistant message with an empty text block")
                if b.get("type") == "text" and b.get("text", "").startswith(_LITELLM_EMPTY_PLACEHOLDER):
                    problems.append(f"message {i}: assistant content was \"\" (litellm replaced it "
                                    "with a placeholder text block); send content=None")
            ids = [b.get("id") for b in blocks if b.get("type") == "tool_use"]
            for dup in {x for x in ids if ids.count(x) > 1}:
                problems.append(f"message {i}: duplicate tool_use id {dup!r}")
            expected, prev_index = list(dict.fromkeys(ids)), i
            continue
        # user (or anything else)
        results = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
        for rid in results:
            if rid in expected:
                expected.remove(rid)
            else:
                problems.append(f"message {i}: tool_result {rid!r} without its tool_use")
        for tid in expected:
            problems.append(f"message {prev_index}: tool_use {tid!r} without its tool_result")
        expected = []
    for tid in expected:
        problems.append(f"message {prev_index}: tool_use {tid!r} without its tool_result")
    return problems


def _validate_gemini(contents: list) -> list[str]:
    problems: list[str] = []
    expected: list[str] = []
    prev_index = -1
    for i, c in enumerate(contents):
        parts = [p for p in (c.get("parts") or []) if isinstance(p, dict)]
        # litellm writes the proto field names in snake_case; the REST docs use camelCase.
        calls = [(p.get("functionCall") or p.get("function_call") or {}).get("name")
                 for p in parts if "functionCall" in p or "function_call" in p]
        responses = [(p.get("functionResponse") or p.get("function_response") or {}).get("name")
                     for p in parts if "functionResponse" in p or "function_response" in p]
        for name in responses:
            if name in expected:
                expected.remove(name)
            else:
                problems.append(f"content {i}: functionResponse {name!r} without its functionCall")
        for name in expected:
            problems.append(f"content {prev_index}: functionCall {name!r} without its functionResponse")
        expected = []
        if calls:
            expected, prev_index = list(calls), i
    for name in expected:
        problems.append(f"content {prev_index}: functionCall {name!r} without its functionResponse")
    return problems
