"""Shared pieces of the provider tests (test_provider_turns, _faults, _models): the wire
formats and their models, the Harness that drives a real Session over real litellm against
the loopback fake, and readers that turn a recorded request body into (role, text) pairs
and tool-call exchanges, whatever the wire format. The fixtures live in conftest.py.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from ikigai_tui.core.notices import ErrorNotice, RetryNotice, TurnFinished
from ikigai_tui.core.session import Session
from ikigai_tui.store.sqlite.store import Store
from tests.fakes.server import FakeProvider, Received

FORMATS = ("openai", "anthropic", "gemini")
MODELS = {
    "openai": "openai/fake-model",
    "anthropic": "anthropic/claude-sonnet-4-5",
    "gemini": "gemini/gemini-2.5-pro",
}
# Another model of the same format, for /model.
OTHER_MODELS = {
    "openai": "openai/other",
    "anthropic": "anthropic/claude-3-5-haiku-20241022",
    "gemini": "gemini/gemini-2.5-flash",
}
KEY_VARIABLES = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY",
                 "gemini": "GEMINI_API_KEY"}
SECRET = "test-key"


def base_for(fake: FakeProvider, fmt: str) -> str:
    return fake.openai_base if fmt == "openai" else fake.base_url


def slash(command: str, args: str | None = None) -> tuple[str, dict]:
    return ("slash", {"command": command, **({"args": args} if args is not None else {})})


# -- harness ------------------------------------------------------------------------------


@dataclass
class Harness:
    fmt: str
    fake: FakeProvider
    store: Store
    session: Session
    path: Any
    notices: list = field(default_factory=list)
    closed: bool = False

    @property
    def root(self) -> str:
        return self.session.tree.root.id

    @property
    def model(self) -> str:
        return MODELS[self.fmt]

    def of(self, kind: type) -> list:
        return [n for n in self.notices if isinstance(n, kind)]

    async def events(self, agent_id: str | None = None, kind: str | None = None) -> list:
        found = await self.store.events(agent_id or self.root)
        return [e for e in found if kind is None or e.kind == kind]

    async def context(self, agent_id: str | None = None) -> list[tuple[int, str, dict]]:
        return await self.session.messages(agent_id or self.root)  # with the text

    async def say(self, text: str, agent_id: str | None = None) -> bool:
        task = await self.session.say(agent_id or self.root, text)
        return await asyncio.wait_for(task, 20)

    async def assert_no_secret(self) -> None:
        """The API key never reaches a message the user sees or the log."""
        for notice in self.notices:
            if isinstance(notice, (ErrorNotice, RetryNotice, TurnFinished)):
                assert SECRET not in repr(notice), notice
        for event in await self.store.events():
            assert SECRET not in json.dumps(event.payload), (event.kind, event.payload)


async def close(h: Harness) -> None:
    if not h.closed:
        h.closed = True
        await h.session.close()
        await h.store.close()


# -- reading request bodies ---------------------------------------------------------------


def text_of(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")


def conversation(rec: Received) -> list[tuple[str, str]]:
    """(role, text) of each message of a request, roles as user/assistant/tool; no system."""
    out: list[tuple[str, str]] = []
    if rec.format == "openai":
        for m in rec.body["messages"]:
            if m["role"] in ("system", "developer"):
                continue
            out.append((m["role"], text_of(m.get("content"))))
    elif rec.format == "anthropic":
        for m in rec.body["messages"]:
            out.append((m["role"], text_of(m.get("content"))))
    else:
        for c in rec.body["contents"]:
            role = "assistant" if c.get("role") == "model" else c.get("role", "user")
            out.append((role, "".join(p.get("text", "") for p in c.get("parts", []))))
    return out


def exchange(rec: Received) -> tuple[list[tuple[str | None, dict]], list[tuple[str | None, str]]]:
    """The tool calls [(id, args)] and results [(id, content)] in a request body, in order.
    Gemini carries no ids (None)."""
    calls: list[tuple[str | None, dict]] = []
    results: list[tuple[str | None, str]] = []
    if rec.format == "openai":
        for m in rec.body["messages"]:
            for tc in m.get("tool_calls") or []:
                calls.append((tc["id"], json.loads(tc["function"]["arguments"])))
            if m["role"] == "tool":
                results.append((m["tool_call_id"], text_of(m.get("content"))))
    elif rec.format == "anthropic":
        for m in rec.body["messages"]:
            for b in m["content"] if isinstance(m["content"], list) else []:
                if b.get("type") == "tool_use":
                    calls.append((b["id"], b["input"]))
                elif b.get("type") == "tool_result":
                    content = b.get("content")
                    results.append((b["tool_use_id"], content if isinstance(content, str)
                                    else text_of(content)))
    else:
        for c in rec.body["contents"]:
            for p in c.get("parts", []):
                call = p.get("functionCall") or p.get("function_call")
                response = p.get("functionResponse") or p.get("function_response")
                if call is not None:
                    calls.append((None, dict(call.get("args") or {})))
                if response is not None:
                    inner = response.get("response") or {}
                    results.append((None, inner.get("content", json.dumps(inner))))
    return calls, results


def expected_exchange(fmt: str, call_events: list, result_events: list):
    """What exchange() must return for these logged tool_call/tool_result events."""
    keep = fmt != "gemini"
    calls = [(e.payload["call_id"] if keep else None, json.loads(e.payload["arguments"]))
             for e in call_events]
    results = [(e.payload["call_id"] if keep else None, e.payload["content"]) for e in result_events]
    return calls, results


def assert_anthropic_clean(rec: Received) -> None:
    if rec.format != "anthropic":
        return
    for m in rec.body["messages"]:
        if m["role"] == "assistant":
            assert m["content"] != "", rec.body["messages"]
            assert m["content"] != [], rec.body["messages"]
            for b in m["content"] if isinstance(m["content"], list) else []:
                assert not (b.get("type") == "text" and not b.get("text")), m
