"""The SQLite event log: group-committed appends and reads (opening: store_open)."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterable, Iterable, Sequence
from pathlib import Path
from typing import Any

import aiosqlite

from ikigai_tui.core.events import AgentRecord, Event, WriteBatch
from ikigai_tui.core.ports import CommitHook, ConflictError, StoreError
from ikigai_tui.store.sqlite.feed import (
    POLL_INTERVAL, TAIL_BATCH, Delivery, Pace, data_version, foreign, poll, read_after,
)
from ikigai_tui.store.sqlite.leases import Leases
from ikigai_tui.store.sqlite.open import LogFile
from ikigai_tui.store.sqlite.payload_json import payload_bytes
from ikigai_tui.store.sqlite.rows import AgentRows
from ikigai_tui.store.sqlite.tokens import TokenCountRows
from ikigai_tui.store.sqlite.vectors import MatchIndexRows
from ikigai_tui.store.writes import (
    UPDATABLE, GroupCommit, agent_params, parents_first, resolve_agent, resolve_refs,
)
from ikigai_tui.core.usage.ledger import TIER

USAGE_SCHEMA = 7  # usage_totals: every agent's usage, summed as it is written

__all__ = ["Store", "StoreError", "CommitHook"]

log = logging.getLogger(__name__)
_AGENT_COLUMNS = "id, parent_id, name, model, status, created_at, fork_event_id, budget"


class Store(GroupCommit, AgentRows, Leases, MatchIndexRows, TokenCountRows, LogFile):
    """An open event log. All writes go through one writer task that batches them."""

    def __init__(self, db: aiosqlite.Connection, path: Path, *, readonly: bool = False) -> None:
        super().__init__(db, path, readonly=readonly)
        self._start_writes()
        # The change feed (see feed.py): the last id handed to the hooks, None until
        # start_feed. The lock: one transaction at a time on this connection (commits,
        # leases), and never a poll's delivery during a commit's.
        self._high: int | None = None
        self._version = 0
        self._lock = asyncio.Lock()
        self._poller: asyncio.Task | None = None
        self._pace = Pace()

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._poller is not None:
            self._poller.cancel()
            try:
                await self._poller
            except asyncio.CancelledError:
                pass
        await self._stop_writes()
        await self._db.close()

    # -- writing ---------------------------------------------------------------

    async def _commit(self, batches: list[WriteBatch]) -> list[list[Event]]:
        async with self._lock:
            with self._writing():
                return await self._commit_batches(batches)

    # -- the change feed -------------------------------------------------------

    async def start_feed(self, interval: float = POLL_INTERVAL) -> int:
        """From now on the hooks also get other writers' events (polled every
        `interval` seconds while the log changes, less often once it is idle: see
        feed.py); returns the last id of the log as of now."""
        async with self._lock:
            with self._reading():
                self._version = await data_version(self._db)
                rows = await self._db.execute_fetchall("SELECT COALESCE(MAX(id), 0) FROM events")
                self._high = int(list(rows)[0][0])
        if self._poller is None and not self.immutable:
            self._pace = Pace(fast=interval)
            self._poller = asyncio.get_running_loop().create_task(
                poll(self.path, self._pace, self.catch_up))
        return self._high

    async def catch_up(self) -> int:
        """Hand the hooks what other writers committed since the last delivery, in id
        order; returns how many events that was."""
        if self._high is None or self._closed:
            return 0
        async with self._lock:
            with self._reading():
                version = await data_version(self._db)
                if version == self._version:
                    return 0
                self._version = version
                return await self._deliver_foreign(
                    lambda after, limit: foreign(self._db, after, limit), TAIL_BATCH)

    async def tail(self, after: int, limit: int | None = None) -> list[Event]:
        """Events with id > after, committed by any writer, in id order."""
        with self._reading():
            return await read_after(self._db, after, limit)

    async def _commit_batches(self, batches: list[WriteBatch]) -> list[list[Event]]:
        db = self._db
        now = time.time()
        await db.execute("BEGIN IMMEDIATE")
        try:
            rows = await db.execute_fetchall("SELECT COALESCE(MAX(id), 0) FROM events")
            next_id = int(list(rows)[0][0]) + 1
            # Other writers' events not delivered yet go to the hooks first: id order.
            prior: Delivery | None = None
            if self._high is not None and next_id - 1 > self._high:
                prior = await foreign(db, self._high)
            # Ids are assigned here, under the write lock, so a batch can refer to its own
            # earlier events (EventRef) in payloads and in agents.fork_event_id.
            agents: list[AgentRecord] = []
            results: list[list[Event]] = []
            params: list[tuple] = []
            for batch in batches:
                first = next_id
                agents.extend(resolve_agent(a, first, now) for a in batch.new_agents)
                events = []
                for ev in batch.events:
                    payload = resolve_refs(ev.payload, first)
                    events.append(Event(next_id, ev.agent_id, ev.kind, payload, now))
                    params.append((next_id, ev.agent_id, ev.kind, payload_bytes(payload), now))
                    next_id += 1
                results.append(events)
            if agents:
                await db.executemany(
                    f"INSERT INTO agents ({_AGENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [agent_params(a) for a in agents],
                )
            if params:
                # The payload bound as UTF-8 bytes, stored as text: bound as a str, one
                # with a character past U+FFFF (4 bytes a character in Python) would be
                # held twice more, as a str and its UTF-8 (a 10 MB message: +50 MB).
                await db.executemany(
                    "INSERT INTO events (id, agent_id, kind, payload, created_at) "
                    "VALUES (?, ?, ?, CAST(? AS TEXT), ?)",
                    params,
                )
            updates = [u for b in batches for u in b.agent_updates]
            for agent_id, column, value in updates:
                if column not in UPDATABLE:
                    raise ValueError(f"agents.{column} cannot be updated")
                await db.execute(f"UPDATE agents SET {column} = ? WHERE id = ?", (value, agent_id))
            factors = [f for b in batches for f in b.factors]
            if factors:
                await db.executemany(
                    "INSERT INTO token_factors (model, factor, samples) VALUES (?, ?, ?) "
                    "ON CONFLICT(model) DO UPDATE SET factor = excluded.factor, "
                    "samples = excluded.samples",
                    factors,
                )
            await db.execute("COMMIT")
        except BaseException:
            await self._rollback()
            raise
        self._pace.changed()  # activity: the poller looks often again
        if prior is not None:
            self._deliver(prior, foreign=True)
        if self._high is not None:
            self._high = next_id - 1
        self._deliver(([e for events in results for e in events], agents, updates))
        return results

    async def import_log(self, agents: Sequence[AgentRecord],
                         pages: AsyncIterable[Sequence[Event]],
                         factors: dict[str, tuple[float, int]]) -> int:
        """Write a whole log as it is given (`ikigai copy`): the agents, then every event
        with its id, payload and time unchanged (pages read as they come: a long log is
        never all in memory), and the token factors, in one transaction, into an empty
        log only (else ConflictError, nothing written). Returns the events written. The
        commit hooks are not told (a feed, if started, catches up as with another
        writer's events)."""
        if self.readonly:
            raise StoreError(f"cannot write to {self.path}: it was opened read-only")
        async with self._lock:
            with self._writing():
                db = self._db
                await db.execute("BEGIN IMMEDIATE")
                try:
                    rows = await db.execute_fetchall(
                        "SELECT EXISTS (SELECT 1 FROM agents) OR EXISTS (SELECT 1 FROM events)")
                    if list(rows)[0][0]:
                        raise ConflictError(f"{self.path} is not empty: a log is copied "
                                            "only into an empty one")
                    await db.executemany(
                        f"INSERT INTO agents ({_AGENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        [agent_params(a) for a in parents_first(agents)])
                    count = 0
                    async for page in pages:
                        await db.executemany(
                            "INSERT INTO events (id, agent_id, kind, payload, created_at) "
                            "VALUES (?, ?, ?, CAST(? AS TEXT), ?)",
                            [(e.id, e.agent_id, e.kind, payload_bytes(e.payload), e.created_at)
                             for e in page])
                        count += len(page)
                    await db.executemany(
                        "INSERT INTO token_factors (model, factor, samples) VALUES (?, ?, ?)",
                        [(m, f, n) for m, (f, n) in factors.items()])
                    await db.execute("COMMIT")
                except BaseException:
                    await self._rollback()
                    raise
        self._pace.changed()
        return count

    # -- reading ---------------------------------------------------------------

    async def events(
        self, agent_id: str | None = None, *, after: int = 0, limit: int | None = None
    ) -> list[Event]:
        sql = "SELECT id, agent_id, kind, payload, created_at FROM events WHERE id > ?"
        params: list[Any] = [after]
        if agent_id is not None:
            sql += " AND agent_id = ?"
            params.append(agent_id)
        sql += " ORDER BY id"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        rows = await self._fetch(sql, params)
        return [Event(i, a, k, json.loads(p), c) for i, a, k, p, c in rows]

    async def page(
        self, agent_id: str, kinds: Iterable[str], *, before: int | None = None,
        after: int | None = None, limit: int = 100,
    ) -> list[Event]:
        """A page of one agent's events of some kinds, in log order: the newest `limit`
        before `before`, or the oldest `limit` after `after` (for a scrollback)."""
        wanted = list(kinds)
        marks = ",".join("?" for _ in wanted)
        sql = ("SELECT id, agent_id, kind, payload, created_at FROM events "
               f"WHERE agent_id = ? AND kind IN ({marks})")
        params: list[Any] = [agent_id, *wanted]
        if after is not None:
            sql += " AND id > ? ORDER BY id LIMIT ?"
            params += [after, limit]
        else:
            if before is not None:
                sql += " AND id < ?"
                params.append(before)
            sql += " ORDER BY id DESC LIMIT ?"
            params.append(limit)
        rows = await self._fetch(sql, params)
        events = [Event(i, a, k, json.loads(p), c) for i, a, k, p, c in rows]
        return events if after is not None else events[::-1]

    async def agents(self) -> list[AgentRecord]:
        rows = await self._fetch(
            f"SELECT {_AGENT_COLUMNS} FROM agents ORDER BY created_at, rowid"
        )
        return [AgentRecord(*r) for r in rows]

    async def unread_counts(self, upto: int | None = None) -> dict[str, int]:
        """Unread mail per agent: mails received minus mails read (each is read once),
        counting the events up to id `upto` when given."""
        rows = await self._fetch(
            "SELECT agent_id, SUM(CASE kind WHEN 'mail' THEN 1 "
            "ELSE -json_array_length(payload, '$.ids') END) "
            "FROM events WHERE kind IN ('mail', 'mail_read') AND id <= ? GROUP BY agent_id",
            [upto if upto is not None else 2**63 - 1],
        )
        return {agent_id: int(n) for agent_id, n in rows if n}

    async def token_factors(self) -> dict[str, tuple[float, int]]:
        if self.version < 2:  # an older file opened read-only: not migrated, no factors
            return {}
        rows = await self._fetch("SELECT model, factor, samples FROM token_factors")
        return {model: (float(factor), int(samples)) for model, factor, samples in rows}

    async def usage_sums(self, tier: int) -> list[tuple[str, str, bool, int, int]]:
        """Every agent's reported usage: (agent, model, over `tier` input tokens, input,
        output) summed per such group; kept summed by the schema (usage_totals), or in one
        pass over the log for an older file opened read-only or another tier."""
        if self.version >= USAGE_SCHEMA and tier == TIER:
            rows = await self._fetch("SELECT agent_id, model, above, input, output FROM usage_totals")
            return [(a, m, bool(above), int(i), int(o)) for a, m, above, i, o in rows]
        rows = await self._fetch(
            "SELECT agent_id, json_extract(payload, '$.model') AS model, "
            "json_extract(payload, '$.input_tokens') > ? AS above, "
            "SUM(json_extract(payload, '$.input_tokens')), "
            "SUM(json_extract(payload, '$.output_tokens')) "
            "FROM events WHERE kind = 'usage' GROUP BY agent_id, model, above", (tier,))
        return [(a, m or "", bool(above), int(i or 0), int(o or 0)) for a, m, above, i, o in rows]

    async def count_events(self) -> int:
        rows = await self._fetch("SELECT COUNT(*) FROM events")
        return int(list(rows)[0][0])

    async def max_event_id(self) -> int:
        rows = await self._fetch("SELECT COALESCE(MAX(id), 0) FROM events")
        return int(list(rows)[0][0])

    async def search(self, query: str, ids: Iterable[str], limit: int = 50) -> list[Event]:
        """Full-text search over the messages of the given agents, best match first."""
        agent_ids = list(ids)
        marks = ",".join("?" for _ in agent_ids)
        rows = await self._fetch(
            "SELECT e.id, e.agent_id, e.kind, e.payload, e.created_at FROM message_fts f "
            f"JOIN events e ON e.id = f.rowid WHERE message_fts MATCH ? AND e.agent_id IN ({marks}) "
            "ORDER BY bm25(message_fts) LIMIT ?",
            [query, *agent_ids, limit],
        )
        return [Event(i, a, k, json.loads(p), c) for i, a, k, p, c in rows]

    async def search_keys(self, query: str, ids: Iterable[str],
                          limit: int = 5000) -> list[tuple[int, str]]:
        agent_ids = list(ids)
        marks = ",".join("?" for _ in agent_ids)
        rows = await self._fetch(
            "SELECT e.id, e.agent_id FROM message_fts f JOIN events e ON e.id = f.rowid "
            f"WHERE message_fts MATCH ? AND e.agent_id IN ({marks}) ORDER BY f.rowid DESC LIMIT ?",
            [query, *agent_ids, limit],
        )
        return [(i, a) for i, a in rows]

    async def integrity_check(self) -> str:
        rows = await self._fetch("PRAGMA integrity_check")
        return str(list(rows)[0][0])

    async def integrity_problems(self, limit: int = 100) -> list[str]:
        """SQLite's full integrity check: [] when the file is sound, else its findings.
        Reads every page: for `ikigai check`, never on an ordinary open."""
        rows = await self._fetch(f"PRAGMA integrity_check({int(limit)})")
        found = [str(r[0]) for r in rows]
        return [] if found == ["ok"] else found
