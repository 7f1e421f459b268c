"""Shared pieces of the event-log tests (test_store_open, _writes, _search): an agent
record to write, a store opened with some agents already in it, and a plain sqlite3
connection to the same file for looking underneath the Store.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from ikigai_tui.core.events import AgentRecord, WriteBatch
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
