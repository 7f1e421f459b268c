"""A Reply in each provider's wire format: streamed events or one JSON body."""

from __future__ import annotations

import json
import re
import time
from typing import Iterator

from tests.fakes.items import ANTHROPIC, GEMINI, OPENAI, Reply


# --------------------------------------------------------------------------- serialization


def _split_text(text: str, size: int | None) -> list[str]:
    if not text:
        return []
    if size and size > 0:
        return [text[i:i + size] for i in range(0, len(text), size)]
    return re.findall(r"^\s+|\S+\s*", text)


def _split_args(args_json: str, size: int | None) -> list[str]:
    """At least two pieces."""
    if size and size > 0 and len(args_json) > size:
        return [args_json[i:i + size] for i in range(0, len(args_json), size)]
    if len(args_json) < 2:
        return [args_json, ""]
    n = 3 if len(args_json) >= 3 else 2
    step = -(-len(args_json) // n)
    return [args_json[i:i + step] for i in range(0, len(args_json), step)]


class _Malformed:
    """Marker event: the stream writes data that is not JSON here."""


def _tool_calls(reply: Reply, ids: Iterator[int], prefix: str) -> list[tuple[str, dict, str]]:
    out = []
    for tc in reply.tool_calls:
        name, args = tc[0], tc[1]
        tc_id = tc[2] if len(tc) > 2 and tc[2] else f"{prefix}{next(ids)}"
        out.append((name, dict(args or {}), tc_id))
    return out


def _openai_stream(reply: Reply, model: str, n: int, ids) -> list:
    calls = _tool_calls(reply, ids, "call_")
    base = {"id": f"chatcmpl-fake{n}", "object": "chat.completion.chunk",
            "created": int(time.time()), "model": model, "system_fingerprint": "fp_fake"}

    def chunk(delta, finish=None):
        return dict(base, choices=[{"index": 0, "delta": delta, "logprobs": None,
                                    "finish_reason": finish}])

    ev = [(None, chunk({"role": "assistant", "content": ""}), False)]
    for piece in _split_text(reply.text, reply.chunk_size):
        ev.append((None, chunk({"content": piece}), True))
    for i, (name, args, tc_id) in enumerate(calls):
        ev.append((None, chunk({"tool_calls": [{"index": i, "id": tc_id, "type": "function",
                                                "function": {"name": name, "arguments": ""}}]}), True))
        for piece in _split_args(json.dumps(args), reply.chunk_size):
            ev.append((None, chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}), True))
    finish = reply.stop_reason or ("tool_calls" if calls else "stop")
    if not reply.no_finish:
        ev.append((None, chunk({}, finish), False))
    p, c = reply.usage
    ev.append((None, dict(base, choices=[], usage={"prompt_tokens": p, "completion_tokens": c,
                                                  "total_tokens": p + c}), False))
    ev.append((None, "[DONE]", False))
    return ev


def _openai_full(reply: Reply, model: str, n: int, ids) -> dict:
    calls = _tool_calls(reply, ids, "call_")
    msg: dict = {"role": "assistant", "content": reply.text or None, "refusal": None}
    if calls:
        msg["tool_calls"] = [{"id": i, "type": "function",
                              "function": {"name": name, "arguments": json.dumps(args)}}
                             for name, args, i in calls]
    finish = reply.stop_reason or ("tool_calls" if calls else "stop")
    p, c = reply.usage
    return {"id": f"chatcmpl-fake{n}", "object": "chat.completion", "created": int(time.time()),
            "model": model, "system_fingerprint": "fp_fake",
            "choices": [{"index": 0, "message": msg, "logprobs": None, "finish_reason": finish}],
            "usage": {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}}


def _anthropic_stop(reply: Reply, calls) -> str:
    if reply.stop_reason == "length":
        return "max_tokens"
    if reply.stop_reason:
        return reply.stop_reason
    return "tool_use" if calls else "end_turn"


def _anthropic_stream(reply: Reply, model: str, n: int, ids) -> list:
    calls = _tool_calls(reply, ids, "toolu_")
    p, c = reply.usage
    ev = [("message_start", {"type": "message_start", "message": {
        "id": f"msg_fake{n}", "type": "message", "role": "assistant", "model": model,
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": p, "output_tokens": 1}}}, False)]
    index = 0
    if reply.text:
        ev.append(("content_block_start", {"type": "content_block_start", "index": index,
                                           "content_block": {"type": "text", "text": ""}}, False))
        for piece in _split_text(reply.text, reply.chunk_size):
            ev.append(("content_block_delta", {"type": "content_block_delta", "index": index,
                                               "delta": {"type": "text_delta", "text": piece}}, True))
        ev.append(("content_block_stop", {"type": "content_block_stop", "index": index}, False))
        index += 1
    for name, args, tc_id in calls:
        ev.append(("content_block_start", {"type": "content_block_start", "index": index,
                                           "content_block": {"type": "tool_use", "id": tc_id,
                                                             "name": name, "input": {}}}, False))
        for piece in _split_args(json.dumps(args), reply.chunk_size):
            ev.append(("content_block_delta", {"type": "content_block_delta", "index": index,
                                               "delta": {"type": "input_json_delta",
                                                         "partial_json": piece}}, True))
        ev.append(("content_block_stop", {"type": "content_block_stop", "index": index}, False))
        index += 1
    if reply.no_finish:
        return ev
    ev.append(("message_delta", {"type": "message_delta",
                                 "delta": {"stop_reason": _anthropic_stop(reply, calls),
                                           "stop_sequence": None},
                                 "usage": {"output_tokens": c}}, False))
    ev.append(("message_stop", {"type": "message_stop"}, False))
    return ev


def _anthropic_full(reply: Reply, model: str, n: int, ids) -> dict:
    calls = _tool_calls(reply, ids, "toolu_")
    content: list = []
    if reply.text:
        content.append({"type": "text", "text": reply.text})
    for name, args, tc_id in calls:
        content.append({"type": "tool_use", "id": tc_id, "name": name, "input": args})
    p, c = reply.usage
    return {"id": f"msg_fake{n}", "type": "message", "role": "assistant", "model": model,
            "content": content, "stop_reason": _anthropic_stop(reply, calls), "stop_sequence": None,
            "usage": {"input_tokens": p, "output_tokens": c}}


def _gemini_parts(reply: Reply) -> list[dict]:
    parts = [{"text": t} for t in _split_text(reply.text, reply.chunk_size)]
    for tc in reply.tool_calls:
        parts.append({"functionCall": {"name": tc[0], "args": dict(tc[1] or {})}})
    return parts


def _gemini_finish(reply: Reply) -> str:
    if reply.stop_reason == "length":
        return "MAX_TOKENS"
    return reply.stop_reason.upper() if reply.stop_reason else "STOP"


def _gemini_usage(reply: Reply) -> dict:
    p, c = reply.usage
    return {"promptTokenCount": p, "candidatesTokenCount": c, "totalTokenCount": p + c}


def _gemini_stream(reply: Reply, model: str, n: int, ids) -> list:
    parts = _gemini_parts(reply) or [{"text": ""}]
    ev = []
    for i, part in enumerate(parts):
        cand: dict = {"content": {"role": "model", "parts": [part]}, "index": 0}
        payload: dict = {"candidates": [cand], "modelVersion": model, "responseId": f"fake{n}"}
        if i == len(parts) - 1:
            if not reply.no_finish:
                cand["finishReason"] = _gemini_finish(reply)
            payload["usageMetadata"] = _gemini_usage(reply)
        ev.append((None, payload, True))
    return ev


def _gemini_full(reply: Reply, model: str, n: int, ids) -> dict:
    parts = [{"text": reply.text}] if reply.text else []
    parts += [{"functionCall": {"name": tc[0], "args": dict(tc[1] or {})}} for tc in reply.tool_calls]
    return {"candidates": [{"content": {"role": "model", "parts": parts or [{"text": ""}]},
                            "finishReason": _gemini_finish(reply), "index": 0}],
            "usageMetadata": _gemini_usage(reply), "modelVersion": model, "responseId": f"fake{n}"}


_STREAM = {OPENAI: _openai_stream, ANTHROPIC: _anthropic_stream, GEMINI: _gemini_stream}
_FULL = {OPENAI: _openai_full, ANTHROPIC: _anthropic_full, GEMINI: _gemini_full}
