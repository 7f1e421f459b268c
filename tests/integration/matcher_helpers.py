"""Pieces of the matcher tests: a conversation of topic exchanges written straight to the
log, and a fake-provider responder that answers report_matches by what each request
shows (concurrent chunk requests arrive in any order)."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable

from ikigai_tui.core.events import WriteBatch
from tests.fakes.server import Fault, Received, Reply

LABEL = re.compile(r"\[#(\d+) (\w+)\]")

TOPICS = {
    "schema": ("How should the database schema store orders?",
               "Use an orders table with a foreign key to customers; index created_at."),
    "weather": ("What is the weather like in Lisbon in November?",
                "Mild: around 17 degrees, with some rain."),
    "music": ("Recommend a jazz album for a quiet evening.",
              "Kind of Blue by Miles Davis is a calm classic."),
}


async def write_exchanges(h, topics: list[str], agent_id: str | None = None,
                          padding: int = 0) -> dict[int, str]:
    """One user question and one assistant answer per topic, in order; returns each
    message id's topic. `padding` adds that many characters to every message."""
    agent = agent_id or h.root
    batch = WriteBatch()
    for topic in topics:
        question, answer = TOPICS[topic]
        batch.add(agent, "user", {"content": question + " " + "x" * padding})
        batch.add(agent, "assistant", {"content": answer + " " + "y" * padding})
    events = await h.session.commit(batch)
    return {e.id: topics[n // 2] for n, e in enumerate(events)}


def request_text(received: Received) -> str:
    return json.dumps(received.body)


def shown_ids(received: Received) -> list[int]:
    """The message ids a matcher request shows, in order."""
    return [int(m.group(1)) for m in LABEL.finditer(request_text(received))]


def report(matches: list[tuple[int, str]], **reply) -> Reply:
    return Reply(tool_calls=[("report_matches",
                              {"matches": [{"id": i, "reason": r} for i, r in matches]})],
                 usage=(100, 10), **reply)


class Responder:
    """Reports, for each request, the shown messages whose topic is asked for (by the
    topic's word in the criteria); `extra` ids are added to every report (hallucinated);
    `faults` are answered first, one per request, before the reports."""

    def __init__(self, topic_of: dict[int, str], topic: str, *, extra: tuple[int, ...] = (),
                 faults: list[Fault] | None = None, delay: float = 0.0,
                 reply: Callable[[Received], Reply | Fault | None] | None = None) -> None:
        self.topic_of = topic_of
        self.topic = topic
        self.extra = extra
        self.faults = list(faults or [])
        self.delay = delay
        self.reply = reply
        self.lock = threading.Lock()
        self.seen: list[list[int]] = []

    def __call__(self, received: Received) -> Reply | Fault:
        ids = shown_ids(received)
        with self.lock:
            self.seen.append(ids)
            if self.faults:
                return self.faults.pop(0)
        if self.reply is not None:
            found = self.reply(received)
            if found is not None:
                return found
        if self.delay:
            time.sleep(self.delay)
        hits = [(i, f"about {self.topic}") for i in ids if self.topic_of.get(i) == self.topic]
        return report(hits + [(i, "made up") for i in self.extra])


def answer_by_word(word: str, delay: float = 0.0):
    """Reports the shown messages whose text holds `word` (matcher requests only), after
    `delay` seconds."""
    def respond(received):
        body = json.dumps(received.body)
        if "report_matches" not in body:
            return None
        time.sleep(delay)
        text = received.body["messages"][-1]["content"]
        blocks = LABEL.split(text)[1:]  # id, role, text, id, role, text, ...
        hits = [(int(blocks[n]), f"mentions {word}") for n in range(0, len(blocks), 3)
                if word in blocks[n + 2].lower()]
        return report(hits)
    return respond
