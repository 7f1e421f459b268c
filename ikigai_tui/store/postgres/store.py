"""The event log on PostgreSQL: the same ports as the SQLite store (core/ports.py), through
asyncpg, in a schema of its own.

Ids are the feed's position: a commit takes a transaction-scoped advisory lock of the
log, then numbers its events after the largest id. The lock is released only once the
transaction is committed and visible, so a later commit's ids are always greater and
no reader ever sees an id before a smaller one is committed: "every event after the
last id I saw" misses nothing, with any number of writers. NOTIFY (sent by each commit)
only wakes the other processes' feeds; they catch up from the last id they delivered,
and look on their own every FALLBACK seconds in case a notification was lost.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from collections.abc import AsyncIterable, Sequence
from typing import Any

from ikigai_tui.core.events import AgentRecord, Event, WriteBatch
from ikigai_tui.core.ports import ConflictError, StoreError
from ikigai_tui.core.replay.bodies import outline_row
from ikigai_tui.store.postgres.connect import (
    LOCK_CLASS, ConnectionLost, connect_pool, driver, ready_schema, translated,
)
from ikigai_tui.store.postgres.reads import AGENT_COLUMNS, EVENT_COLUMNS, LogReads, event_of
from ikigai_tui.store.postgres.state import SmallStateRows
from ikigai_tui.store.postgres.search import search_text
from ikigai_tui.store.postgres.url import parse
from ikigai_tui.store.writes import (
    UPDATABLE, Delivery, GroupCommit, agent_params, derived_updates, parents_first,
    resolve_agent, resolve_refs,
)

log = logging.getLogger(__name__)

CHANNEL = "ikigai_events"  # NOTIFY's channel; the payload is the log's schema
FALLBACK = 1.0  # seconds between looks at the log when no notification came
RETRY_FOR = 30.0  # seconds a lost connection is tried again before the write fails
RETRY_FIRST, RETRY_MOST = 0.1, 2.0  # the backoff's first and longest waits
CLOSE_WAIT = 5.0  # seconds the connections get to end their work at close
TAIL_BATCH = 5000
_INSERT_EVENT = (
    "INSERT INTO events (id, agent_id, kind, payload, outline, created_at, search) "
    "VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $7::text IS NULL THEN NULL "
    "ELSE to_tsvector('simple', $7::text) END)")


def _event_params(event_id: int, agent_id: str, kind: str, payload: dict,
                  created_at: float) -> tuple:
    """An event's row as _INSERT_EVENT takes it: its outline and search text beside it."""
    return (event_id, agent_id, kind, json.dumps(payload, ensure_ascii=False),
            _outline_text(kind, payload), created_at, search_text(kind, payload))


def _outline_text(kind: str, payload: dict) -> str | None:
    """The outline replay reads of a message (None: the payload itself)."""
    shown = outline_row((0, kind, payload))[2]
    return None if shown is payload else json.dumps(dict(shown), ensure_ascii=False)


class PgStore(LogReads, SmallStateRows, GroupCommit):
    """An open log on PostgreSQL (a pool of a few connections; one more listens while the
    feed runs)."""

    def __init__(self, pool: Any, target: Any, *, readonly: bool, version: int) -> None:
        self._pool = pool
        self._target = target
        self.path = target.shown  # what messages name: the URL without its password
        self.schema = target.schema
        self.readonly = readonly
        self.immutable = False
        self.version = version
        self._start_writes()
        self._lock = asyncio.Lock()  # a commit's delivery and a catch-up never interleave
        self._high: int | None = None
        self._feed: asyncio.Task | None = None
        self._wake = asyncio.Event()
        self._listener: Any = None
        # Told when the server is lost (a line) and back (None): the status bar's line.
        self.on_trouble: Any = None
        self._troubled = False

    @classmethod
    async def open(cls, url: str, *, create: bool = True, readonly: bool = False) -> PgStore:
        target = parse(url)
        pool = await connect_pool(target, readonly)
        try:
            async with pool.acquire() as con:
                version = await ready_schema(con, target, create=create, readonly=readonly)
        except BaseException:
            await pool.close()
            raise
        return cls(pool, target, readonly=readonly, version=version)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._feed is not None:
            self._feed.cancel()
            self._wake.set()
            await asyncio.wait([self._feed], timeout=CLOSE_WAIT)
        await self._stop_writes()
        if self._listener is not None:
            try:
                await self._listener.close(timeout=2)
            except Exception:  # a connection already lost: nothing to close
                pass
        try:  # a connection still held (a read cancelled midway) must not keep us open
            await asyncio.wait_for(self._pool.close(), CLOSE_WAIT)
        except (asyncio.TimeoutError, Exception):
            self._pool.terminate()

    async def _retrying(self, attempt: Any) -> Any:
        """`attempt()` again, with backoff, while the server is lost (for RETRY_FOR
        seconds): a restarted server or a dropped connection costs a wait, not the work.
        What was committed stays committed; a batch sent again is written once (its key)."""
        delay, deadline = RETRY_FIRST, time.monotonic() + RETRY_FOR
        while True:
            try:
                result = await attempt()
            except ConnectionLost as exc:
                if self._closed or time.monotonic() + delay > deadline:
                    raise
                self._trouble(f"{exc}; trying again")
                await asyncio.sleep(delay)
                delay = min(delay * 2, RETRY_MOST)
                continue
            if self._troubled:
                self._trouble(None)
            return result

    def _trouble(self, line: str | None) -> None:
        """Tell on_trouble when the server is lost (once, not at each try) and back."""
        was, self._troubled = self._troubled, line is not None
        if line is not None:
            log.warning("%s", line)
        if self.on_trouble is not None and was != self._troubled:
            try:
                self.on_trouble(line)
            except Exception:
                log.exception("the trouble listener failed")

    async def _on_connection(self, job: Any) -> Any:
        async def attempt() -> Any:
            with translated(self.path):
                async with self._pool.acquire() as con:
                    return await job(con)

        return await self._retrying(attempt)

    async def _fetch(self, sql: str, *args: Any) -> list:
        return await self._on_connection(lambda con: con.fetch(sql, *args))

    async def _value(self, sql: str, *args: Any) -> Any:
        return await self._on_connection(lambda con: con.fetchval(sql, *args))

    async def _execute(self, sql: str, *args: Any) -> None:
        self._check_writable()
        await self._on_connection(lambda con: con.execute(sql, *args))

    def _check_writable(self) -> None:
        if self.readonly:
            raise StoreError(f"cannot write to {self.path}: it was opened read-only")

    # -- writing ---------------------------------------------------------------

    async def _commit(self, batches: list[WriteBatch]) -> list[list[Event]]:
        for batch in batches:
            batch.key = batch.key or uuid.uuid4().hex

        async def attempt() -> list[list[Event]]:
            async with self._lock:
                with translated(self.path):
                    async with self._pool.acquire() as con:
                        return await self._commit_batches(con, batches)

        return await self._retrying(attempt)

    async def _committed(self, con: Any, batches: list[WriteBatch]) -> dict[str, list[Event]]:
        """The batches of these that an earlier attempt committed (its acknowledgement
        lost with the connection), by key, with their events as they were written."""
        rows = await con.fetch("SELECT key, first_id, last_id FROM batches WHERE key = ANY($1)",
                               [b.key for b in batches])
        found: dict[str, list[Event]] = {}
        for key, first, last in rows:
            events = await con.fetch(f"SELECT {EVENT_COLUMNS} FROM events WHERE id BETWEEN "
                                     "$1 AND $2 ORDER BY id", first, last)
            found[key] = [event_of(r) for r in events]
        return found

    async def _commit_batches(self, con: Any, batches: list[WriteBatch]) -> list[list[Event]]:
        now = time.time()
        prior: Delivery | None = None
        async with con.transaction():
            await con.execute("SELECT pg_advisory_xact_lock($1, hashtext($2))",
                              LOCK_CLASS, self.schema)
            next_id = int(await con.fetchval("SELECT COALESCE(MAX(id), 0) FROM events")) + 1
            if self._high is not None and next_id - 1 > self._high:
                prior = await self._foreign(con, self._high)
            done = await self._committed(con, batches)
            agents: list[AgentRecord] = []
            results: list[list[Event]] = []
            rows: list[tuple] = []
            keys: list[tuple] = []
            for batch in batches:
                if batch.key in done:  # written already: not again
                    results.append(done[batch.key])
                    continue
                keys.append((batch.key, next_id, next_id + len(batch.events) - 1))
                first = next_id
                agents.extend(resolve_agent(a, first, now) for a in batch.new_agents)
                events = []
                for ev in batch.events:
                    payload = resolve_refs(ev.payload, first)
                    events.append(Event(next_id, ev.agent_id, ev.kind, payload, now))
                    rows.append(_event_params(next_id, ev.agent_id, ev.kind, payload, now))
                    next_id += 1
                results.append(events)
            if agents:
                await con.executemany(
                    f"INSERT INTO agents ({AGENT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                    [agent_params(a) for a in agents])
            if rows:
                await con.executemany(_INSERT_EVENT, rows)
            updates = [u for b in batches for u in b.agent_updates]
            for agent_id, column, value in updates:
                if column not in UPDATABLE:
                    raise ValueError(f"agents.{column} cannot be updated")
                await con.execute(f"UPDATE agents SET {column} = $1 WHERE id = $2", value, agent_id)
            factors = [f for b in batches for f in b.factors]
            if factors:
                await con.executemany(
                    "INSERT INTO token_factors (model, factor, samples) VALUES ($1, $2, $3) "
                    "ON CONFLICT (model) DO UPDATE SET factor = excluded.factor, "
                    "samples = excluded.samples", factors)
            if keys:
                await con.executemany("INSERT INTO batches (key, first_id, last_id) "
                                      "VALUES ($1, $2, $3)", keys)
            if rows or agents or updates:
                await con.execute("SELECT pg_notify($1, $2)", CHANNEL, self.schema)
        if prior is not None:
            self._deliver(prior, foreign=True)
        if self._high is not None:
            self._high = max(self._high, next_id - 1)
        # Batches an earlier attempt committed reached the hooks with the other writers'
        # events before them (`prior`), when the feed runs; else they go now.
        fresh = [e for batch, events in zip(batches, results)
                 if prior is None or batch.key not in done for e in events]
        if fresh or agents or updates:
            self._deliver((fresh, agents, updates))
        return results

    async def import_log(self, agents: Sequence[AgentRecord],
                         pages: AsyncIterable[Sequence[Event]],
                         factors: dict[str, tuple[float, int]]) -> int:
        """Write a whole log as it is given (`ikigai copy`): the agents, then every event
        with its id, payload and time unchanged (pages read as they come: a long log is
        never all in memory), and the token factors, in one transaction under the log's
        commit lock, into an empty log only (else ConflictError, nothing written).
        Returns the events written. Not retried: a lost connection writes nothing."""
        self._check_writable()
        async with self._lock:
            with translated(self.path):
                async with self._pool.acquire() as con:
                    async with con.transaction():
                        await con.execute("SELECT pg_advisory_xact_lock($1, hashtext($2))",
                                          LOCK_CLASS, self.schema)
                        if await con.fetchval("SELECT EXISTS (SELECT 1 FROM agents) OR "
                                              "EXISTS (SELECT 1 FROM events)"):
                            raise ConflictError(f"{self.path} is not empty: a log is copied "
                                                "only into an empty one")
                        await con.executemany(
                            f"INSERT INTO agents ({AGENT_COLUMNS}) VALUES "
                            "($1, $2, $3, $4, $5, $6, $7, $8)",
                            [agent_params(a) for a in parents_first(agents)])
                        count = 0
                        async for page in pages:
                            await con.executemany(_INSERT_EVENT, [
                                _event_params(e.id, e.agent_id, e.kind, e.payload, e.created_at)
                                for e in page])
                            count += len(page)
                        await con.executemany(
                            "INSERT INTO token_factors (model, factor, samples) "
                            "VALUES ($1, $2, $3)", [(m, f, n) for m, (f, n) in factors.items()])
                        await con.execute("SELECT pg_notify($1, $2)", CHANNEL, self.schema)
        return count

    # -- the change feed -------------------------------------------------------

    async def start_feed(self, interval: float = FALLBACK) -> int:
        """From now on the hooks also get other writers' events: woken by NOTIFY, and
        every `interval` seconds in case one was lost; returns the log's last id now."""
        async with self._lock:
            self._high = int(await self._value("SELECT COALESCE(MAX(id), 0) FROM events"))
        if self._feed is None:
            try:
                self._listener = await driver().connect(
                    self._target.dsn, server_settings={"search_path": self.schema},
                    timeout=10)
                await self._listener.add_listener(CHANNEL, self._notified)
            except Exception as exc:  # the feed still polls
                log.warning("no LISTEN on %s: %s", self.path, exc)
                self._listener = None
            self._feed = asyncio.get_running_loop().create_task(self._follow(interval))
        return self._high

    def _notified(self, _con: Any, _pid: int, _channel: str, payload: str) -> None:
        if payload == self.schema:
            self._wake.set()

    async def _follow(self, interval: float) -> None:
        # Until closed: asyncio.wait_for (3.11) may lose a cancel that arrives as the
        # wake-up does, so the loop also ends on its own once the store is closed.
        while not self._closed:
            try:
                await asyncio.wait_for(self._wake.wait(), interval)
            except asyncio.TimeoutError:
                pass
            self._wake.clear()
            if self._closed:
                return
            try:
                await self.catch_up()
            except StoreError as exc:  # the server away for a moment: try again later
                log.warning("catching up with %s: %s", self.path, exc)

    async def catch_up(self) -> int:
        """Hand the hooks what other writers committed since the last delivery, in id
        order; returns how many events that was."""
        if self._high is None or self._closed:
            return 0
        async with self._lock:
            with translated(self.path):
                async with self._pool.acquire() as con:
                    return await self._deliver_foreign(
                        lambda after, limit: self._foreign(con, after, limit), TAIL_BATCH)

    async def _foreign(self, con: Any, after: int, limit: int | None = None) -> Delivery:
        events = [event_of(r) for r in await con.fetch(
            f"SELECT {EVENT_COLUMNS} FROM events WHERE id > $1 ORDER BY id LIMIT $2",
            after, limit)]
        if not events:
            return [], [], []
        ids = sorted({e.agent_id for e in events})
        rows = await con.fetch(f"SELECT {AGENT_COLUMNS} FROM agents WHERE id = ANY($1) "
                               "ORDER BY created_at, seq", ids)
        return events, [AgentRecord(*r) for r in rows], derived_updates(events)

    async def tail(self, after: int, limit: int | None = None) -> list[Event]:
        rows = await self._fetch(f"SELECT {EVENT_COLUMNS} FROM events WHERE id > $1 "
                                 "ORDER BY id LIMIT $2", after, limit)
        return [event_of(r) for r in rows]
