"""Shared pieces of the event-log tests (test_store_open, _writes, _search): an agent
record to write, a store opened with some agents already in it, a plain sqlite3
connection to the same file for looking underneath the Store, and a log of an older schema.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

from ikigai_tui.core.events import AgentRecord, WriteBatch
from ikigai_tui.store.sqlite.schema import MIGRATIONS
from ikigai_tui.store.sqlite.store import Store


def agent_record(agent_id: str, parent: str | None = None, name: str | None = None) -> AgentRecord:
    return AgentRecord(agent_id, parent, name, "offline", "idle", time.time(), None, None)


async def open_with_agents(path: Path, *ids: str) -> Store:
    store = await Store.open(path, create=True)
    batch = WriteBatch()
    batch.new_agents.extend(agent_record(i) for i in ids)
    await store.write(batch)
    return store


def sqlite_connection(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None)


def log_of_schema(path: Path, version: int, events: list[tuple[str, str, dict]]) -> None:
    """A log as ikigai wrote it at schema `version`: its agents and `events` (agent, kind,
    payload), ids from 1, written through that schema's triggers."""
    conn = sqlite_connection(path)
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        for target in range(1, version + 1):
            for statement in MIGRATIONS[target]:
                conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {version}")
        for agent in dict.fromkeys(a for a, _k, _p in events):
            conn.execute("INSERT INTO agents (id, model, created_at) VALUES (?, 'offline', 1.0)",
                         (agent,))
        for n, (agent, kind, payload) in enumerate(events, 1):
            conn.execute("INSERT INTO events (id, agent_id, kind, payload, created_at) "
                         "VALUES (?, ?, ?, ?, ?)", (n, agent, kind, json.dumps(payload), float(n)))
    finally:
        conn.close()
