"""Context -> the request a provider receives: valid for every provider."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ikigai_tui.core.replay import Replayer

DEFAULT_SYSTEM_PROMPT = "You are a helpful assistant working inside ikigai, a terminal workbench."
OMITTED = "(The earlier part of this conversation is not shown.)"


def system_text(replayer: Replayer, default: str = DEFAULT_SYSTEM_PROMPT) -> str:
    text = replayer.system or default
    if replayer.pins:
        pins = "\n".join(f"{i}. {p}" for i, p in enumerate(replayer.pins, 1))
        text += f"\n\nPinned notes (always apply):\n{pins}"
    return text


def build_messages(replayer: Replayer, window: Sequence[int] | None = None) -> list[dict[str, Any]]:
    """OpenAI-format messages: the summaries, then the window (default: the whole
    context), with tool calls and results only in complete pairs."""
    ctx = replayer.ctx
    result_of = replayer.result_of
    if window is None:
        entries: Iterable[tuple[int, tuple]] = ctx.items()
    else:
        summaries = [(k, e) for k, e in ctx.items() if e[1] == "summary"] if replayer.summaries else []
        entries = [*summaries, *((k, ctx[k]) for k in window)]
        sent = {k for k, _ in entries}
        ctx = {k: ctx[k] for k in sent}  # a partner outside the window counts as missing
    out: list[dict[str, Any]] = []
    for key, (_, kind, payload) in entries:
        if kind == "user":
            out.append({"role": "user", "content": payload["content"]})
        elif kind == "assistant":
            if payload.get("content"):
                out.append({"role": "assistant", "content": payload["content"]})
        elif kind == "tool_call":
            if result_of.get(key) not in ctx:
                continue  # still running, or its result was removed: never send half a pair
            call = {
                "id": payload["call_id"],
                "type": "function",
                "function": {"name": payload["name"], "arguments": payload.get("arguments") or "{}"},
            }
            last = out[-1] if out else None
            if last is not None and last["role"] == "assistant":
                last.setdefault("tool_calls", []).append(call)
            else:
                out.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind == "tool_result":
            if payload.get("call_event") not in ctx:
                continue
            out.append({"role": "tool", "tool_call_id": payload["call_id"],
                        "content": payload.get("content") or ""})
        elif kind == "summary":
            out.append({"role": "user",
                        "content": f"Summary of the earlier conversation:\n{payload['content']}"})
    if out and out[0]["role"] != "user":
        out.insert(0, {"role": "user", "content": OMITTED})
    return out
