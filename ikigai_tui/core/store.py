"""The SQLite event log: opening, migrations, group-committed appends, reads."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import logging

import aiosqlite

from ikigai_tui.core.events import AgentRecord, Event, EventRef, EventRow, WriteBatch
from ikigai_tui.core.schema import MIGRATIONS, SCHEMA_VERSION
from ikigai_tui.core.store_errors import StoreError, damaged, primary_code, translate
from ikigai_tui.core.store_errors import SQLITE_CANTOPEN, SQLITE_READONLY
from ikigai_tui.core.store_paths import (
    file_state, make_file, read_only_uri, refuse_writes, wal_is_empty, write_problem,
)

__all__ = ["Store", "StoreError", "CommitHook"]

log = logging.getLogger(__name__)
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
ROW_BATCH = 5000
_AGENT_COLUMNS = "id, parent_id, name, model, status, created_at, fork_event_id, budget"
_UPDATABLE = {"status", "model", "name"}


CommitHook = Callable[[list[Event], list[AgentRecord], list[tuple[str, str, Any]]], None]


class _NeedsImmutable(Exception):
    """A read-only open must be retried as immutable (see Store._open_readonly)."""


class Store:
    """An open event log. All writes go through one writer task that batches them."""

    def __init__(self, db: aiosqlite.Connection, path: Path, *, readonly: bool = False) -> None:
        self._db = db
        self.path = path
        self.readonly = readonly
        self.immutable = False
        self.version = SCHEMA_VERSION
        self._queue: asyncio.Queue[tuple[WriteBatch, asyncio.Future]] = asyncio.Queue()
        self._writer: asyncio.Task | None = None
        self._hooks: list[CommitHook] = []
        self._closed = False

    # -- opening ---------------------------------------------------------------

    @classmethod
    async def open(cls, path: str | os.PathLike, *, create: bool = True,
                   readonly: bool = False) -> Store:
        """Open the log; with create, make a new one (folders 0700, file 0600). With
        readonly, open it read-only (never created, never written, never re-moded).
        The mode of an existing file is never changed."""
        path = Path(path).expanduser()
        st = file_state(path)
        if st is None:
            if not create or readonly:
                raise StoreError(f"no database at {path}")
            make_file(path)
        elif os.path.isdir(path):
            raise StoreError(f"{path} is a folder, not a database file")
        elif not readonly and (problem := write_problem(path, st)):
            raise refuse_writes(path, problem)
        if readonly:
            return await cls._open_readonly(path)
        db = await cls._connect(path, str(path))
        return await cls._configured(db, path)

    @staticmethod
    async def _connect(path: Path, target: str, **kwargs: Any) -> aiosqlite.Connection:
        try:
            return await aiosqlite.connect(target, isolation_level=None, timeout=30.0, **kwargs)
        except sqlite3.Error as exc:
            raise translate(exc, path) from exc

    @classmethod
    async def _configured(cls, db: aiosqlite.Connection, path: Path, *,
                          readonly: bool = False, immutable: bool = False) -> Store:
        store = cls(db, path, readonly=readonly)
        store.immutable = immutable
        try:
            await store._configure()
        except BaseException:
            await db.close()
            raise
        return store

    @classmethod
    async def _open_readonly(cls, path: Path) -> Store:
        db = await cls._connect(path, read_only_uri(path), uri=True)
        try:
            return await cls._configured(db, path, readonly=True)
        except _NeedsImmutable:
            pass
        # A WAL database in a read-only folder or mount, whose -wal and -shm are gone and
        # cannot be created: SQLite reads it only as immutable. Safe when no write-ahead
        # log holds anything (the file then has every committed event).
        db = await cls._connect(path, read_only_uri(path, immutable=True), uri=True)
        return await cls._configured(db, path, readonly=True, immutable=True)

    async def _configure(self) -> None:
        db = self._db
        try:
            version, tables = await self._inspect()
        except sqlite3.DatabaseError as exc:
            code = primary_code(exc)
            if self.readonly and not self.immutable and code in (SQLITE_READONLY, SQLITE_CANTOPEN):
                if wal_is_empty(self.path):
                    raise _NeedsImmutable() from exc
                raise StoreError(
                    f"cannot read {self.path}: its write-ahead log {self.path}-wal holds "
                    "changes not merged yet and SQLite cannot open it here (read-only "
                    "folder); copy the database and its -wal file to a writable folder"
                ) from exc
            raise translate(exc, self.path) from exc
        self.version = version
        # Checked before any PRAGMA that writes: such files are left untouched.
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path} was written by a newer ikigai (schema {version}; this "
                f"program knows up to {SCHEMA_VERSION}). Upgrade ikigai; the file was not changed."
            )
        if version == 0 and tables:
            raise StoreError(f"{self.path} is an SQLite database of another program; "
                             "refusing to change it")
        if self.readonly:
            if version == 0:
                raise StoreError(f"{self.path} holds no ikigai data yet; start with `ikigai run`")
            with self._reading():
                await db.execute("PRAGMA busy_timeout = 30000")
                await db.execute("PRAGMA query_only = ON")
            return
        with self._writing():
            await self._make_writable()

    async def _make_writable(self) -> None:
        db = self._db
        version = self.version
        await db.execute("PRAGMA busy_timeout = 30000")
        await self._set_wal()
        await db.execute("PRAGMA synchronous = FULL")
        await db.execute("PRAGMA foreign_keys = ON")
        if version < SCHEMA_VERSION:
            await self._migrate()
            self.version = SCHEMA_VERSION

    async def _inspect(self) -> tuple[int, int]:
        """user_version and the number of tables, from one consistent snapshot (another
        process may be creating the schema right now: it sets both in one transaction)."""
        db = self._db
        await db.execute("BEGIN")
        try:
            version = await self._user_version()
            rows = await db.execute_fetchall(
                "SELECT COUNT(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")
            return version, int(list(rows)[0][0])
        finally:
            await db.execute("COMMIT")

    async def _set_wal(self) -> None:
        # Switching a new file to WAL answers SQLITE_BUSY at once (no busy_timeout) while
        # another process holds a lock on it, as when two start on a new database.
        deadline = time.monotonic() + 30
        while True:
            try:
                await self._db.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc) or time.monotonic() > deadline:
                    raise StoreError(f"cannot open {self.path}: {exc}") from exc
                await asyncio.sleep(0.02)

    async def _user_version(self) -> int:
        rows = await self._db.execute_fetchall("PRAGMA user_version")
        return int(list(rows)[0][0])

    async def _migrate(self) -> None:
        db = self._db
        await db.execute("BEGIN IMMEDIATE")
        try:
            # Re-read under the write lock: another process may have migrated meanwhile.
            version = await self._user_version()
            for target in range(version + 1, SCHEMA_VERSION + 1):
                for statement in MIGRATIONS[target]:
                    await db.execute(statement)
                await db.execute(f"PRAGMA user_version = {target}")
            await db.execute("COMMIT")
        except BaseException:
            await self._rollback()
            raise

    async def _rollback(self) -> None:
        """Roll back what is open. A full disk or an I/O error may already have rolled the
        transaction back: ROLLBACK would then fail and hide the error that matters."""
        if not self._db.in_transaction:
            return
        try:
            await self._db.execute("ROLLBACK")
        except sqlite3.Error:
            log.warning("rollback of %s failed", self.path, exc_info=True)

    @contextlib.contextmanager
    def _reading(self) -> Iterator[None]:
        """sqlite3 errors met while reading become one-line StoreErrors."""
        try:
            yield
        except sqlite3.IntegrityError:
            raise
        except sqlite3.DatabaseError as exc:
            raise translate(exc, self.path) from exc

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """As _reading; IntegrityError (a constraint: a name taken, an unknown agent) is
        the caller's to handle and passes through unchanged."""
        try:
            yield
        except sqlite3.IntegrityError:
            raise
        except sqlite3.DatabaseError as exc:
            raise translate(exc, self.path, writing=True) from exc

    async def _fetch(self, sql: str, params: Iterable[Any] = ()) -> list:
        with self._reading():
            return list(await self._db.execute_fetchall(sql, params))

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._writer is not None:
            await self._queue.join()
            self._writer.cancel()
            try:
                await self._writer
            except asyncio.CancelledError:
                pass
        await self._db.close()

    # -- writing ---------------------------------------------------------------

    def add_commit_hook(self, hook: CommitHook) -> None:
        """Called after each commit with the new events in id order, before writers resume."""
        self._hooks.append(hook)

    async def write(self, batch: WriteBatch) -> list[Event]:
        """Commit a batch atomically; returns its events with their ids. A database that
        cannot take it (full disk, read-only, damaged) raises StoreError: nothing of the
        batch is written and everything committed before is kept."""
        if self._closed:
            raise StoreError("the database is closed")
        if self.readonly:
            raise StoreError(f"cannot write to {self.path}: it was opened read-only")
        if self._writer is None or self._writer.done():
            self._writer = asyncio.get_running_loop().create_task(self._write_loop())
        future: asyncio.Future = asyncio.get_running_loop().create_future()
        self._queue.put_nowait((batch, future))
        return await future

    async def append(self, agent_id: str, kind: str, payload: dict) -> Event:
        batch = WriteBatch()
        batch.add(agent_id, kind, payload)
        return (await self.write(batch))[0]

    async def _write_loop(self) -> None:
        while True:
            group = [await self._queue.get()]
            while not self._queue.empty():
                group.append(self._queue.get_nowait())
            try:
                await self._commit_group(group)
            finally:
                for _ in group:
                    self._queue.task_done()

    async def _commit_group(self, group: list[tuple[WriteBatch, asyncio.Future]]) -> None:
        live = [(b, f) for b, f in group if not f.cancelled()]
        if not live:
            return
        try:
            results = await self._commit([b for b, _ in live])
        except Exception as exc:
            if len(live) > 1:
                # One bad batch must not fail the others: retry them one by one.
                for item in live:
                    await self._commit_group([item])
            elif not live[0][1].done():
                live[0][1].set_exception(exc)
            return
        for (_, future), events in zip(live, results):
            if not future.done():
                future.set_result(events)

    async def _commit(self, batches: list[WriteBatch]) -> list[list[Event]]:
        with self._writing():
            return await self._commit_batches(batches)

    async def _commit_batches(self, batches: list[WriteBatch]) -> list[list[Event]]:
        db = self._db
        now = time.time()
        await db.execute("BEGIN IMMEDIATE")
        try:
            rows = await db.execute_fetchall("SELECT COALESCE(MAX(id), 0) FROM events")
            next_id = int(list(rows)[0][0]) + 1
            # Ids are assigned here, under the write lock, so a batch can refer to its own
            # earlier events (EventRef) in payloads and in agents.fork_event_id.
            agents: list[AgentRecord] = []
            results: list[list[Event]] = []
            params: list[tuple] = []
            for batch in batches:
                first = next_id
                agents.extend(_resolve_agent(a, first, now) for a in batch.new_agents)
                events = []
                for ev in batch.events:
                    payload = _resolve_refs(ev.payload, first)
                    events.append(Event(next_id, ev.agent_id, ev.kind, payload, now))
                    params.append((next_id, ev.agent_id, ev.kind, _dumps(payload), now))
                    next_id += 1
                results.append(events)
            if agents:
                await db.executemany(
                    f"INSERT INTO agents ({_AGENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [_agent_params(a) for a in agents],
                )
            if params:
                await db.executemany(
                    "INSERT INTO events (id, agent_id, kind, payload, created_at) "
                    "VALUES (?, ?, ?, ?, ?)",
                    params,
                )
            updates = [u for b in batches for u in b.agent_updates]
            for agent_id, column, value in updates:
                if column not in _UPDATABLE:
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
        flat = [e for events in results for e in events]
        for hook in self._hooks:
            # The transaction is committed: a failing hook must never make the caller
            # think otherwise (a retry would write the batch twice).
            try:
                hook(flat, agents, updates)
            except Exception:
                log.exception("commit hook failed")
        return results

    # -- reading ---------------------------------------------------------------

    async def agent_rows(self, agent_id: str, upto: int | None = None) -> list[EventRow]:
        """One agent's events in log order, decoded; only ids below `upto` when given."""
        sql = "SELECT id, kind, payload FROM events WHERE agent_id = ?"
        params: tuple = (agent_id,)
        if upto is not None:
            sql += " AND id < ?"
            params = (agent_id, upto)
        loads = json.loads
        out: list[EventRow] = []
        # Decoded in batches: the raw rows of a long log never all live at once next
        # to their decoded payloads (half the peak memory of opening 100,000 events).
        with self._reading():
            async with self._db.execute(sql + " ORDER BY id", params) as cursor:
                while rows := await cursor.fetchmany(ROW_BATCH):
                    out.extend((i, k, loads(p)) for i, k, p in rows)
        return out

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

    async def unread_counts(self) -> dict[str, int]:
        """Unread mail per agent: mails received minus mails read (each is read once)."""
        rows = await self._fetch(
            "SELECT agent_id, SUM(CASE kind WHEN 'mail' THEN 1 "
            "ELSE -json_array_length(payload, '$.ids') END) "
            "FROM events WHERE kind IN ('mail', 'mail_read') GROUP BY agent_id"
        )
        return {agent_id: int(n) for agent_id, n in rows if n}

    async def token_factors(self) -> dict[str, tuple[float, int]]:
        if self.version < 2:  # an older file opened read-only: not migrated, no factors
            return {}
        rows = await self._fetch("SELECT model, factor, samples FROM token_factors")
        return {model: (float(factor), int(samples)) for model, factor, samples in rows}

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

    async def integrity_check(self) -> str:
        rows = await self._fetch("PRAGMA integrity_check")
        return str(list(rows)[0][0])

    async def integrity_problems(self, limit: int = 100) -> list[str]:
        """SQLite's full integrity check: [] when the file is sound, else its findings.
        Reads every page: for `ikigai check`, never on an ordinary open."""
        rows = await self._fetch(f"PRAGMA integrity_check({int(limit)})")
        found = [str(r[0]) for r in rows]
        return [] if found == ["ok"] else found


def _agent_params(agent: AgentRecord) -> tuple:
    return (
        agent.id, agent.parent_id, agent.name, agent.model, agent.status,
        agent.created_at, agent.fork_event_id, agent.budget,
    )


def _resolve_agent(agent: AgentRecord, first_id: int, now: float) -> AgentRecord:
    fork = agent.fork_event_id
    if isinstance(fork, EventRef):
        fork = first_id + fork.index
    return AgentRecord(
        agent.id, agent.parent_id, agent.name, agent.model, agent.status,
        agent.created_at or now, fork, agent.budget,
    )


def _resolve_refs(payload: dict, first_id: int) -> dict:
    if not any(isinstance(v, EventRef) for v in payload.values()):
        return payload
    return {k: (first_id + v.index if isinstance(v, EventRef) else v) for k, v in payload.items()}

