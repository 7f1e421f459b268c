"""What the pruned-turn summary tests share: the fake's responder (turns get a short
reply, summary requests a numbered summary or a fault), a harness with summaries on, and
readers of what the requests held."""

from __future__ import annotations

import json
import re

from ikigai_tui.core.notices import CompactionNotice
from ikigai_tui.core.compaction import CompactionSettings
from tests.fakes.server import Fault, Reply

BUDGET = 4_000
WORDS = "plan " * 240  # ~240 tokens a message
MARKER = "so your summary will stand in for them"


def is_pruned_request(received) -> bool:
    return MARKER in json.dumps(received.body)


class Provider:
    """Turns get a short reply; summary requests a numbered summary (or a Fault)."""

    def __init__(self, fault: Fault | None = None, text: str | None = None):
        self.fault = fault
        self.text = text
        self.requests: list = []  # the summary requests received
        self.turns: list = []

    def __call__(self, received):
        usage = (len(json.dumps(received.body)) // 4, 5)
        if is_pruned_request(received):
            self.requests.append(received)
            if self.fault is not None:
                return self.fault
            text = self.text or f"## Goal\nsummary number {len(self.requests)}"
            return Reply(text=text, usage=usage, chunk_size=4_000)
        if "You summarise a conversation" in json.dumps(received.body):  # a /compact
            return Reply(text="## Goal\ncompacted", usage=usage)
        self.turns.append(received)
        return Reply(text="ok", usage=usage)


def body_text(received) -> str:
    return json.dumps(received.body)


async def harness(make, path=None, **compaction):
    compaction.setdefault("summarize_pruned", True)
    return await make(path=path, settings_of_session={
        "budget": BUDGET, "compaction": CompactionSettings(**compaction)})


def notes(h, kind: str | None = None) -> list[str]:
    return [n.text for n in h.of(CompactionNotice) if kind is None or n.kind == kind]


async def turns(h, n: int, start: int = 0) -> None:
    for i in range(start, start + n):
        assert await h.say(f"step {i}: {WORDS}")


def sent_ids(received) -> list[int]:
    """The ids of the items a summary request holds ([#ID KIND] labels)."""
    text = "\n".join(m["content"] for m in received.body["messages"] if m["role"] == "user")
    return [int(i) for i in re.findall(r"\[#(\d+) \w+\]", text)]


def system_of(received) -> str:
    return "\n".join(m["content"] for m in received.body["messages"] if m["role"] == "system")


async def pruned_ids(h, agent_id=None) -> list[int]:
    plan = await h.session.plan(agent_id or h.root)
    meter = h.session.meter(h.session.tree[agent_id or h.root])
    return list(meter.ids[: plan.window.start_index])

async def summarised(make, fake, n: int = 10):
    """A harness whose root took `n` long turns, enough for the window to prune and a
    summary to stand; with its Provider."""
    h = await harness(make)
    provider = Provider()
    fake.respond(provider)
    await turns(h, n)
    assert (await h.session.plan(h.root)).pruned is not None
    return h, provider
