"""Every kind of event in words, one line each: what `ikigai log` prints (its `--json`
keeps the payloads whole) and the notes of `ikigai export`'s Markdown.

A kind added to core/events.py gets its words here: a test checks that none of the
kinds there falls through to its payload's JSON.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping

from ikigai_tui.core.events import Event, message_text
from ikigai_tui.core.memory.change import words as memory_words
from ikigai_tui.core.tools.filter_context import id_ranges
from ikigai_tui.core.tools.permissions import grant_words

Payload = Mapping


def _plural(n: int, what: str) -> str:
    return f"{n:,} {what}{'' if n == 1 else 's'}"


def _ids(payload: Payload) -> list[int]:
    return sorted(i for i in payload.get("ids") or [] if isinstance(i, int))


def filter_words(payload: Payload) -> str:
    """A filter event in words: what it did, the command that made it, the context's size
    before and after (events written before these were recorded have only their ids)."""
    before, after = payload.get("before"), payload.get("after")
    sized = isinstance(before, dict) and isinstance(after, dict)
    remember = payload.get("mode") == "remember"
    restore = payload.get("mode") == "restore"
    if sized and restore:  # the messages that came back, tool-call partners included
        n = after.get("messages", 0) - before.get("messages", 0)
    elif sized:  # the messages that left or stayed, tool-call partners included
        n = after.get("messages", 0) if remember else before.get("messages", 0) - after.get("messages", 0)
    else:
        n = len(payload.get("ids") or [])
    verb = "restored" if restore else "kept only" if remember else "forgot"
    did = f"{verb} {_plural(n, 'message')}"
    if payload.get("command"):
        did += f" by {payload['command']}"
    if sized:
        did += (f"; context {before.get('messages', 0):,} -> {after.get('messages', 0):,} messages, "
                f"~{before.get('tokens', 0):,} -> ~{after.get('tokens', 0):,} tokens")
    return did


def pruned_words(payload: Payload) -> str:
    """A `pruned_summary` event in words: how many messages it stands for, which."""
    n = payload.get("messages", 0)
    ranges = ", ".join(f"{a}-{b}" if a != b else f"{a}" for a, b in payload.get("ranges") or [])
    return (f"summary of {n:,} pruned message{'s' if n != 1 else ''} (ids {ranges}; "
            f"{payload.get('tokens', 0):,} tokens by {payload.get('model', '?')})")


def tool_output_words(payload: Payload) -> str:
    """A `tool_output` event: the tool results whose text it cleared (their size, the
    command, the context before and after), or brought back."""
    ids = _ids(payload)
    what = f"the output of {_plural(len(ids), 'tool result')} (ids {id_ranges(ids)})"
    if payload.get("action") == "restore":
        return f"restored {what}"
    tokens = sum(t for t in payload.get("tokens") or [] if isinstance(t, int))
    did = f"cleared {what}, {tokens:,} tokens"
    if payload.get("command"):
        did += f" by {payload['command']}"
    elif payload.get("auto"):
        did += " by the automatic rule"
    before, after = payload.get("before"), payload.get("after")
    if isinstance(before, dict) and isinstance(after, dict):
        did += f"; context ~{before.get('tokens', 0):,} -> ~{after.get('tokens', 0):,} tokens"
    return did


def cwd_words(payload: Payload) -> str:
    """A `cwd` event: the agent's workspace, from the folder it had."""
    words = f"workspace {payload.get('path', '?')}"
    if payload.get("previous"):
        words += f" (was {payload['previous']})"
    if payload.get("source"):
        words += f", by {payload['source']}"
    return words


def _message(kind: str) -> Callable[[Payload], str]:
    def words(payload: Payload) -> str:
        text = message_text(kind, dict(payload))
        if kind == "tool_result":
            flags = [flag for flag, on in (("error", payload.get("is_error")),
                                           ("interrupted", payload.get("interrupted"))) if on]
            call = payload.get("call_event")
            head = f"(for #{call}{'; ' if flags else ''}{', '.join(flags)}) " if call else ""
            return head + text
        return text
    return words


def _compact(payload: Payload) -> str:
    n = len(payload.get("ids") or [])
    how = "an automatic summary" if payload.get("auto") else "a summary"
    words = f"{_plural(n, 'message')} replaced by {how} by {payload.get('model', '?')}"
    if isinstance(payload.get("before"), int) and isinstance(payload.get("after"), int):
        words += f"; ~{payload['before']:,} -> ~{payload['after']:,} tokens"
    return words + (f" (focus: {payload['focus']})" if payload.get("focus") else "")


def _fork(payload: Payload) -> str:
    at = f" at mark {payload['mark']}" if payload.get("mark") else ""
    if payload.get("at_event") is not None:
        at += f" up to #{payload['at_event']}"
    if "child" in payload:
        return f"forked child {payload['child']}{at}"
    words = f"forked from {payload.get('parent', '?')} (its event #{payload.get('parent_event', '?')}){at}"
    if payload.get("mail"):
        words += f", mail {payload['mail']}"
    return words + (", reports home" if payload.get("report") else "")


def _mail(payload: Payload) -> str:
    what = "mail"
    if payload.get("report"):
        what = "report" if payload.get("ok", True) else "failure report"
    return f"{what} from {payload.get('from', '?')}: {' '.join(str(payload.get('text', '')).split())}"


def _usage(payload: Payload) -> str:
    purpose = f" ({payload['purpose']})" if payload.get("purpose") else ""
    return (f"{payload.get('model', '?')}{purpose}: {payload.get('input_tokens', 0):,} in, "
            f"{payload.get('output_tokens', 0):,} out")


def _unanswered(payload: Payload) -> str:
    waiting = payload.get("unanswered")
    return f" (#{waiting} left unanswered)" if waiting is not None else ""


def _budget(payload: Payload) -> str:
    def words(value: object) -> str:
        return f"{value:,} tokens" if isinstance(value, int) and value > 0 else "off"

    return f"window budget {words(payload.get('budget'))} (was {words(payload.get('previous'))})"


WORDS: dict[str, Callable[[Payload], str]] = {
    **{kind: _message(kind) for kind in ("user", "assistant", "tool_call", "tool_result", "system")},
    "command": lambda p: str(p.get("text", "")) + (
        f" (the LLM's; refused: {p['refused']})" if p.get("refused") else ""),
    "filter": lambda p: f"{filter_words(p)} (ids {id_ranges(_ids(p))})",
    "memory": lambda p: memory_words(dict(p)),
    "pruned_summary": lambda p: f"{pruned_words(p)}: {' '.join(str(p.get('summary', '')).split())}",
    "clear": lambda p: "context cleared",
    "mark": lambda p: (f"mark {p['name']}" if p.get("name") else "checkpoint")
    + (f" at #{p['entry']}" if p.get("entry") is not None else ""),
    "rewind": lambda p: (f"rewound to {p['mark']}" if p.get("mark") else "rewound to the checkpoint")
    + (f" (#{p['mark_event']})" if p.get("mark_event") else ""),
    "compact": _compact,
    "fork": _fork,
    "kill": lambda p: f"killed by {p.get('by', '?')}",
    "rename": lambda p: f"renamed {p.get('previous') or '(unnamed)'} to {p.get('name', '?')}",
    "revive": lambda p: f"revived by {p.get('by', '?')}",
    "mail": _mail,
    "mail_mode": lambda p: f"mail mode {p.get('mode', '?')}",
    "mail_read": lambda p: f"read mail {id_ranges(_ids(p))}",
    "model": lambda p: f"model {p.get('model', '?')}",
    "pin": lambda p: f"pinned: {' '.join(str(p.get('text', '')).split())}",
    "unpin": lambda p: f"unpinned #{p.get('index', '?')}",
    "budget": _budget,
    "usage": _usage,
    "btw": lambda p: (f"side question to {p.get('model', '?')} (in no context): "
                      f"{' '.join(str(p.get('question', '')).split())} -> "
                      f"{' '.join(str(p.get('answer', '')).split())}"),
    "interrupted": lambda p: f"turn interrupted: {p.get('reason', '?')}{_unanswered(p)}",
    "error": lambda p: str(p.get("message", "")),
    "permission": lambda p: grant_words(p),
    "cwd": cwd_words,
    "tool_output": tool_output_words,
}

# What an undo names of the event it reverses.
UNDONE = {"filter": filter_words, "tool_output": tool_output_words, "permission": grant_words}


def event_line(event: Event, earlier: dict[int, Event]) -> str:
    """`#12 kind: words`; `earlier`: the events before it (an undo names what it reverses)."""
    payload = event.payload
    if event.kind == "undo" and isinstance(payload.get("target"), int):
        target = earlier.get(payload["target"])
        kind = f" {target.kind}" if target is not None else ""
        text = f"reverses{kind} #{payload['target']}"
        if target is not None and target.kind in UNDONE:
            text += f": {UNDONE[target.kind](target.payload)}"
    elif (words := WORDS.get(event.kind)) is not None:
        try:
            text = words(payload)
        except (AttributeError, KeyError, TypeError, ValueError):  # a payload of another shape
            text = json.dumps(payload, ensure_ascii=False)
    else:
        text = json.dumps(payload, ensure_ascii=False)
    return f"#{event.id} {event.kind}: {text}"
