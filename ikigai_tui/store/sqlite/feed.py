"""Other writers' events, found cheaply: the change feed of the SQLite backend.

While a session is open, a poller looks at the write-ahead log's size and modification
time (one stat call in the event loop, no query): another process's commit appends to
that file. It looks every POLL_INTERVAL while the log changes, and backs off to
IDLE_POLL_INTERVAL once nothing has changed for IDLE_AFTER seconds (an open, idle
session then costs a quarter of the wake-ups); any change it sees, or a commit of this
process's own, brings it back to POLL_INTERVAL. When the file changed (and at least once
a second, in case a file system's clock is coarse), `PRAGMA data_version` says whether
another connection committed since the last look
(https://www.sqlite.org/pragma.html#pragma_data_version: it changes only for other
connections' commits), and if so the events after the last one delivered are read and
handed to the commit hooks, in id order, each exactly once.

The same delivery runs inside each of this process's own write transactions when other
writers' events precede it, so the hooks never see an id before a smaller one.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiosqlite

from ikigai_tui.core.events import AgentRecord, Event
from ikigai_tui.core.ports import StoreError
from ikigai_tui.store.writes import Delivery, derived_updates

log = logging.getLogger(__name__)

POLL_INTERVAL = 0.05  # seconds: another process's append shows within ~1/20 s
IDLE_POLL_INTERVAL = 0.2  # seconds, once idle: an append after a quiet spell, within ~1/5 s
IDLE_AFTER = 2.0  # seconds without a change before the poller backs off
FALLBACK_SECONDS = 1.0  # ask SQLite at least this often even if the file looks unchanged
TAIL_BATCH = 5000
AGENT_COLUMNS = "id, parent_id, name, model, status, created_at, fork_event_id, budget"



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


async def data_version(db: aiosqlite.Connection) -> int:
    rows = await db.execute_fetchall("PRAGMA data_version")
    return int(list(rows)[0][0])


def wal_signature(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(f"{path}-wal")
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


class Pace:
    """How long the poller sleeps: `fast` while the log changes, `slow` once it has not
    changed for `idle_after` seconds."""

    def __init__(self, fast: float = POLL_INTERVAL, slow: float = IDLE_POLL_INTERVAL,
                 idle_after: float = IDLE_AFTER, clock: Callable[[], float] = time.monotonic) -> None:
        self.fast, self.slow, self.idle_after, self.clock = fast, max(fast, slow), idle_after, clock
        self.changed_at = clock()

    def changed(self) -> None:
        self.changed_at = self.clock()

    def interval(self) -> float:
        return self.fast if self.clock() - self.changed_at < self.idle_after else self.slow


async def poll(path: Path, pace: Pace, catch_up: Callable[[], Awaitable[int]]) -> None:
    """Until cancelled: look at the write-ahead log at `pace`; when it changed, or a second
    has passed since SQLite was last asked, `catch_up` (which delivers what other writers
    committed and says how many events that was)."""
    signature = wal_signature(path)
    asked = pace.clock()
    while True:
        interval = pace.interval()
        await asyncio.sleep(interval)
        now = wal_signature(path)
        if now != signature:
            pace.changed()
        elif pace.clock() - asked + interval <= FALLBACK_SECONDS:
            continue  # unchanged, and the next look is still within the second
        signature, asked = now, pace.clock()
        try:
            if await catch_up():
                pace.changed()
        except StoreError as exc:  # a damaged page, say: the next commit says it too
            log.warning("reading other writers' events failed: %s", exc)
