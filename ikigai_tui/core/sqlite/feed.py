"""Other writers' events, found cheaply: the change feed of the SQLite backend.

While a session is open, a poller looks every POLL_INTERVAL at the write-ahead log's size
and modification time (one stat call in the event loop, no query): another process's
commit appends to that file. When it changed (and at least every FALLBACK_TICKS polls,
in case a file system's clock is coarse), `PRAGMA data_version` says whether another
connection committed since the last look (https://www.sqlite.org/pragma.html#pragma_data_version:
it changes only for other connections' commits), and if so the events after the last one
delivered are read and handed to the commit hooks, in id order, each exactly once.

The same delivery runs inside each of this process's own write transactions when other
writers' events precede it, so the hooks never see an id before a smaller one.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from pathlib import Path
from typing import Any

import aiosqlite

from ikigai_tui.core.events import AgentRecord, Event

log = logging.getLogger(__name__)

POLL_INTERVAL = 0.05  # seconds: another process's append shows within ~1/20 s
FALLBACK_TICKS = 20  # ask SQLite at least once a second even if the file looks unchanged
TAIL_BATCH = 5000
AGENT_COLUMNS = "id, parent_id, name, model, status, created_at, fork_event_id, budget"

Delivery = tuple[list[Event], list[AgentRecord], list[tuple[str, str, Any]]]


async def read_after(db: aiosqlite.Connection, after: int, limit: int | None = None) -> list[Event]:
    sql = "SELECT id, agent_id, kind, payload, created_at FROM events WHERE id > ? ORDER BY id"
    params: list[Any] = [after]
    if limit is not None:
        sql += " LIMIT ?"
        params.append(limit)
    rows = await db.execute_fetchall(sql, params)
    loads = json.loads
    return [Event(i, a, k, loads(p), c) for i, a, k, p, c in rows]


async def foreign(db: aiosqlite.Connection, after: int, limit: int | None = None) -> Delivery:
    """The events after `after` with the agents they belong to, and the changes to those
    agents their events make (a kill, a model): what the hooks need to apply them."""
    events = await read_after(db, after, limit)
    if not events:
        return [], [], []
    ids = sorted({e.agent_id for e in events})
    marks = ",".join("?" for _ in ids)
    rows = await db.execute_fetchall(
        f"SELECT {AGENT_COLUMNS} FROM agents WHERE id IN ({marks}) ORDER BY created_at, rowid", ids)
    return events, [AgentRecord(*r) for r in rows], derived_updates(events)


def derived_updates(events: list[Event]) -> list[tuple[str, str, Any]]:
    """The agents-table changes that events stand for (what `agents` rows derive from)."""
    out: list[tuple[str, str, Any]] = []
    for e in events:
        if e.kind == "kill":
            out.append((e.agent_id, "status", "dead"))
        elif e.kind == "model" and e.payload.get("model"):
            out.append((e.agent_id, "model", e.payload["model"]))
        elif e.kind == "rename" and e.payload.get("name"):
            out.append((e.agent_id, "name", e.payload["name"]))
    return out


async def data_version(db: aiosqlite.Connection) -> int:
    rows = await db.execute_fetchall("PRAGMA data_version")
    return int(list(rows)[0][0])


def wal_signature(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(f"{path}-wal")
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)
