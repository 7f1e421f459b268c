"""The built-in offline model: deterministic replies, no key, no network.

It answers by describing what it can see, so every context command has a visible
effect without a provider. A line of the user's message of the form
`@slash COMMAND ARGS` makes it call the `slash` tool, which lets the LLM side of the
command registry be used and tested offline too. A request whose tool_choice requires a
tool (a side request through the gateway, say) gets a call to it, arguments filled in.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from json.encoder import encode_basestring_ascii  # type: ignore[attr-defined]

from ikigai_tui.core.provider import (
    Request, StreamEvent, TextDelta, ToolCall, Usage, requires_tool,
)

SNIPPET = 80


def _snippet(text: str) -> str:
    """The text's start on one line, its whitespace collapsed. Only as much of it as fills
    the snippet is split: splitting a 10 MB message whole made ~60 MB of words."""
    text = str(text or "")
    size = SNIPPET * 4
    while True:
        # A prefix's collapsed form is a prefix of the whole's.
        line = " ".join(text[:size].split())
        if len(line) > SNIPPET or size >= len(text):
            break
        size *= 4
    return line if len(line) <= SNIPPET else line[: SNIPPET - 1] + "…"


def _tokens(size: int) -> int:
    """~4 bytes a token."""
    return max(1, (size + 3) // 4)


PIECE = 1 << 16


def json_size(value: object) -> int:
    """len(json.dumps(value)) (ASCII: as many bytes), without building it: strings are
    escaped a slice at a time, so a 10 MB message is not copied whole (up to 6 bytes a
    character once escaped)."""
    if isinstance(value, str):
        return 2 + sum(len(encode_basestring_ascii(value[i:i + PIECE])) - 2
                       for i in range(0, len(value), PIECE))
    if isinstance(value, dict) and all(isinstance(key, str) for key in value):
        return (2 + sum(json_size(k) + 2 + json_size(v) for k, v in value.items())
                + 2 * max(0, len(value) - 1))
    if isinstance(value, (list, tuple)):
        return 2 + sum(map(json_size, value)) + 2 * max(0, len(value) - 1)
    return len(json.dumps(value))


_EMPTY = {"string": "", "integer": 0, "number": 0, "boolean": False, "array": [], "object": {}}


def forced_call(request: Request, name: str) -> ToolCall:
    """The call a request's tool_choice demands: to the named tool (else the first), its
    required arguments filled in deterministically (an enum's first value, else empty)."""
    tools = [t.get("function") or {} for t in request.tools]
    tool = next((t for t in tools if t.get("name") == name), tools[0]) if name else tools[0]
    schema = tool.get("parameters") or {}
    properties = schema.get("properties") or {}
    args = {}
    for key in schema.get("required") or ():
        spec = properties.get(key) or {}
        args[key] = spec["enum"][0] if spec.get("enum") else _EMPTY.get(spec.get("type"), "")
    return ToolCall(f"call_{len(request.messages)}_forced", str(tool.get("name") or ""),
                    json.dumps(args))


def respond(request: Request) -> tuple[str, list[ToolCall]]:
    """The reply to a request: text and tool calls, a pure function of the request."""
    text, calls = _respond(request)
    forced = requires_tool(request)
    if forced is not None and not calls:
        calls = [forced_call(request, forced)]
    if request.max_tokens is not None:
        text = text[: max(1, request.max_tokens) * 4]  # ~4 bytes a token, as it reports
    return text, calls


def _respond(request: Request) -> tuple[str, list[ToolCall]]:
    messages = request.messages
    last = messages[-1] if messages else {"role": "user", "content": ""}
    if last["role"] == "tool":
        results = []
        for m in reversed(messages):
            if m["role"] != "tool":
                break
            results.append(_snippet(m["content"]))
        return "Tool results: " + " | ".join(reversed(results)), []
    content = str(last.get("content") or "")
    calls = []
    # Lines are split only where there is a call: a big message is not copied line by line.
    for i, line in enumerate(content.splitlines() if "@slash " in content else ()):
        if line.startswith("@slash "):
            command, _, args = line[len("@slash "):].strip().partition(" ")
            calls.append(ToolCall(f"call_{len(messages)}_{i}", "slash",
                                  json.dumps({"command": command, "args": args.strip()})))
    if calls:
        return "", calls
    users = [m for m in messages if m["role"] == "user"]
    first = _snippet(messages[0].get("content")) if messages else ""
    text = (
        f'Offline model here. You said: "{_snippet(content)}". '
        f"I can see {len(messages)} message{'s' if len(messages) != 1 else ''} "
        f"({len(users)} from you); the first reads: \"{first}\"."
    )
    return text, []


class OfflineProvider:
    """Streams `respond()` word by word, with an optional delay between words."""

    offline = True

    def __init__(self, model: str = "offline", delay: float = 0.0) -> None:
        self.model = model
        self.delay = delay

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        text, calls = respond(request)
        words = text.split(" ") if text else []
        for i, word in enumerate(words):
            if self.delay:
                await asyncio.sleep(self.delay)
            else:
                await asyncio.sleep(0)
            yield TextDelta(word if i == len(words) - 1 else word + " ")
        for call in calls:
            yield call
        sent = json_size({"system": request.system, "messages": request.messages,
                          "tools": request.tools})
        yield Usage(_tokens(sent), _tokens(len(text.encode("utf-8"))) if text else 1)
