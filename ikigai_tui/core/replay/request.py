"""Context -> the request a provider receives: valid for every provider."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ikigai_tui.core.replay.replayer import Replayer

DEFAULT_SYSTEM_PROMPT = "You are a helpful assistant working inside ikigai, a terminal workbench."
OMITTED = "(The earlier part of this conversation is not shown.)"
SUMMARY_PREFIX = "Summary of the earlier conversation:\n"


def system_text(replayer: Replayer, default: str = DEFAULT_SYSTEM_PROMPT) -> str:
    text = replayer.system or default
    if replayer.pins:
        pins = "\n".join(f"{i}. {p}" for i, p in enumerate(replayer.pins, 1))
        text += f"\n\nPinned notes (always apply):\n{pins}"
    return text


def entry_message(kind: str, payload: dict) -> dict[str, Any]:
    """One context entry as the provider receives it (OpenAI chat format). The one
    serialisation: the request is made of these, and token counts are of these."""
    if kind == "tool_call":
        return {"role": "assistant", "content": None, "tool_calls": [{
            "id": payload.get("call_id"), "type": "function",
            "function": {"name": str(payload.get("name") or ""),
                         "arguments": str(payload.get("arguments") or "{}")},
        }]}
    if kind == "tool_result":
        # A cleared result (a `tool_output` event) sends its stub, not its text.
        content = payload.get("cleared") or payload.get("content")
        return {"role": "tool", "tool_call_id": payload.get("call_id"),
                "content": str(content or "")}
    if kind == "summary":
        return {"role": "user", "content": SUMMARY_PREFIX + str(payload.get("content") or "")}
    role = "assistant" if kind == "assistant" else "user" if kind == "user" else kind
    return {"role": role, "content": str(payload.get("content") or "")}


def message_texts(message: dict[str, Any]) -> tuple[str, ...]:
    """The texts of a serialised entry that count as tokens: role, content, each call's
    name and arguments."""
    texts = (message["role"], message.get("content") or "")
    for call in message.get("tool_calls") or ():
        texts += (call["function"]["name"], call["function"]["arguments"])
    return texts


def build_messages(replayer: Replayer, window: Sequence[int] | None = None,
                   full: Mapping[int, tuple] | None = None) -> list[dict[str, Any]]:
    """OpenAI-format messages: the summaries, then the window (default: the whole
    context), with tool calls and results only in complete pairs. `full` holds the
    entries sent with their whole payloads (Bodies.entries) when the replayer's are
    outlines."""
    ctx = replayer.ctx
    result_of = replayer.result_of
    if window is None:
        entries: Iterable[tuple[int, tuple]] = (
            ctx.items() if full is None else [(k, full.get(k, e)) for k, e in ctx.items()])
    else:
        summaries = [k for k, e in ctx.items() if e[1] == "summary"] if replayer.summaries else []
        source = ctx if full is None else full
        entries = [(k, source[k]) for k in (*summaries, *window) if k in source]
        ctx = dict(entries)  # a partner outside the window counts as missing
    out: list[dict[str, Any]] = []
    # A user message whose turn failed (flagged by the replay) takes the next user
    # message in: a request never holds two user messages in a row because of a failure.
    join: dict[str, Any] | None = None
    for key, (_, kind, payload) in entries:
        if kind == "user":
            message = entry_message(kind, payload)
            if join is not None and out and out[-1] is join:
                join["content"] += "\n\n" + message["content"]
            else:
                out.append(message)
            join = out[-1] if payload.get("failed") else None
            continue
        if kind == "assistant" and not payload.get("content"):
            continue
        if kind == "tool_call":
            if result_of.get(key) not in ctx:
                continue  # still running, or its result was removed: never send half a pair
            message = entry_message(kind, payload)
            last = out[-1] if out else None
            if last is not None and last["role"] == "assistant":
                last.setdefault("tool_calls", []).extend(message["tool_calls"])
                continue
            out.append(message)
        elif kind == "tool_result":
            if payload.get("call_event") not in ctx:
                continue
            out.append(entry_message(kind, payload))
        elif kind in ("assistant", "summary"):
            out.append(entry_message(kind, payload))
    if out and out[0]["role"] != "user":
        out.insert(0, {"role": "user", "content": OMITTED})
    return out
