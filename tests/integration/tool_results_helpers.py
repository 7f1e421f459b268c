"""Shared by the tests of clearing old tool output (issue 25 item 5): a harness whose
LLM may call the fake `dump` tool (tests/fakes/tools.py), turns that run it, and the
next request's body."""

from __future__ import annotations

import json
from typing import Any

from ikigai_tui.core.tools.permissions import PermissionService, Rules
from tests.fakes.server import Reply, validate_pairs
from tests.fakes.tools import Dump, install


def working(make, tmp_path):
    """make(**options) for a harness whose agents work in tmp_path/work (a test fake of
    the workspace) under rules that let every tool run (asking is
    tests/integration/test_permission_events.py's)."""

    async def _make(**options: Any):
        h = await make(**options)
        folder = tmp_path / "work"
        folder.mkdir(exist_ok=True)
        h.session.workspace = lambda agent_id: folder
        h.session.permissions = PermissionService(Rules({"*": "allow"}))
        return h

    return _make


def tooled(make, tmp_path, monkeypatch):
    """make(**options) with `dump` registered and every tool allowed."""
    install(monkeypatch, Dump())
    return working(make, tmp_path)


def dump(tag: str, lines: int = 60, name: str = "dump") -> Reply:
    return Reply(tool_calls=[(name, {"tag": tag, "lines": lines})])


async def run_tools(h, fake, *replies: Reply) -> dict[str, int]:
    """One turn whose LLM calls `replies`' tools one round after another; each tag's
    result event id."""
    fake.queue(*replies, Reply(text="Done."))
    assert await h.say("Run the steps.")
    results = await h.events(kind="tool_result")
    calls = {c.id: c.payload for c in await h.events(kind="tool_call")}
    tags = {r.id: json.loads(calls[r.payload["call_event"]]["arguments"]).get("tag", "")
            for r in results}
    return {tag: key for key, tag in tags.items()}


async def next_request(h, fake) -> str:
    fake.queue(Reply(text="Fine."))
    assert await h.say("Go on.")
    received = fake.requests[-1]
    assert validate_pairs(received) == []
    return json.dumps(received.body)


