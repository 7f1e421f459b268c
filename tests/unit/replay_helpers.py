"""Helpers shared by the replay tests (SPEC §4): a builder for hand-written logs, and
shortcuts that read an agent's context through a real Session or a reopened one.

Every context is the ordered list of (id, kind, payload) that `Replayer.messages()` returns.
"""

from __future__ import annotations

from ikigai_tui.core.replay.replayer import EMPTY, Replayer
from ikigai_tui.core.session import Session, SessionSettings
from ikigai_tui.store.sqlite.store import Store
from ikigai_tui.llm.providers import Providers


# -- a tiny log builder ---------------------------------------------------------------------


class Log:
    """Builds one agent's rows with monotonic ids, the way the store numbers them."""

    def __init__(self, start: int = 1) -> None:
        self.rows: list[tuple[int, str, dict]] = []
        self.next_id = start

    def add(self, kind: str, payload: dict) -> int:
        event_id = self.next_id
        self.next_id += 1
        self.rows.append((event_id, kind, payload))
        return event_id

    def user(self, text: str) -> int:
        return self.add("user", {"content": text})

    def assistant(self, text: str) -> int:
        return self.add("assistant", {"content": text})

    def call(self, call_id: str = "c1", name: str = "slash") -> int:
        return self.add("tool_call", {"call_id": call_id, "name": name, "arguments": "{}"})

    def result(self, call_event: int, content: str = "ok") -> int:
        call_id = next(p["call_id"] for i, k, p in self.rows if i == call_event)
        return self.add("tool_result", {"call_id": call_id, "call_event": call_event,
                                        "content": content})

    def mark(self, name: str | None = None) -> int:
        return self.add("mark", {"name": name})

    def clear(self) -> int:
        return self.add("clear", {})

    def rewind(self, mark_event: int) -> int:
        name = next(p["name"] for i, k, p in self.rows if i == mark_event)
        return self.add("rewind", {"mark": name, "mark_event": mark_event})

    def forget(self, ids) -> int:
        return self.add("filter", {"mode": "forget", "ids": list(ids)})

    def remember(self, ids) -> int:
        return self.add("filter", {"mode": "remember", "ids": list(ids)})

    def restore(self, ids, rows=None) -> int:
        payload: dict = {"mode": "restore", "ids": list(ids)}
        if rows:
            payload["rows"] = [list(r) for r in rows]
        return self.add("filter", payload)

    def compact(self, ids, summary: str = "SUMMARY") -> int:
        return self.add("compact", {"ids": list(ids), "summary": summary})

    def undo(self, target: int) -> int:
        return self.add("undo", {"target": target})

    def replayer(self, base=EMPTY) -> Replayer:
        return Replayer.from_rows(list(self.rows), base)

    def ids(self, base=EMPTY) -> list[int]:
        return [i for i, _k, _p in self.replayer(base).messages()]

    def contents(self, base=EMPTY) -> list[str]:
        return [p.get("content") for _i, _k, p in self.replayer(base).messages()]


def incremental(rows, base=EMPTY) -> Replayer:
    r = Replayer(base)
    for row in rows:
        r.apply(row)
    return r


def ids_of(r: Replayer) -> list[int]:
    return [i for i, _k, _p in r.messages()]


# -- through a session ------------------------------------------------------------------------


async def context_messages(session: Session, agent_id: str) -> list[tuple[int, str, dict]]:
    return await session.messages(agent_id)  # with the text (the replayer holds outlines)


async def context_ids(session: Session, agent_id: str) -> list[int]:
    return [i for i, _k, _p in await context_messages(session, agent_id)]


async def say(session: Session, agent_id: str, text: str) -> list[int]:
    """Send a user message, wait for the reply; the ids it added to the context."""
    before = set(await context_ids(session, agent_id))
    task = await session.say(agent_id, text)
    await task
    return [i for i in await context_ids(session, agent_id) if i not in before]


async def reopened_messages(db_path, agent_ids) -> tuple[dict[str, list], dict[str, list]]:
    """Each agent's context messages and valid marks, replayed from disk by a fresh session."""
    store = await Store.open(db_path)
    try:
        fresh = await Session.open(store, Providers(), SessionSettings())
        out = {a: await fresh.messages(a) for a in agent_ids}
        marks = {a: (await fresh.replayer(a)).valid_marks() for a in agent_ids}
        await fresh.close()
    finally:
        await store.close()
    return out, marks
