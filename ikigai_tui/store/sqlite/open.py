"""Opening the event log's file: read-only or for writing, modes, pragmas, migrations,
and the translation of SQLite's errors into one-line StoreErrors (the errors: core/ports)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Self, TypeVar

import aiosqlite

from ikigai_tui.store.sqlite.schema import MIGRATIONS, SCHEMA_VERSION
from ikigai_tui.store.sqlite.errors import (
    SQLITE_CANTOPEN, SQLITE_MAGIC, ConflictError, SQLITE_READONLY, StoreError, primary_code,
    translate,
)
from ikigai_tui.store.sqlite.paths import (
    file_state, make_file, read_only_uri, refuse_writes, sidecars, wal_is_empty, write_problem,
)

log = logging.getLogger(__name__)
UPGRADE_NOTICE_FROM = 50_000  # events from which an upgrade says so first (_tell_of_upgrade)
T = TypeVar("T")


_TABLES = "SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"
# Made by the first migration: every ikigai database, whatever its version, has them.
IKIGAI_TABLES = frozenset({"agents", "events"})


def foreign_problem(path: Path, version: int, tables: frozenset[str]) -> str | None:
    """Why the file is not ours to open (another program's, a newer ikigai's), or None
    for an ikigai database or a new, empty one."""
    if version == 0 and not tables:
        return None  # new: the first migration makes it an ikigai database
    ours = IKIGAI_TABLES <= tables
    if version > SCHEMA_VERSION:
        who = "a newer ikigai" if ours else "another program, or a newer ikigai"
        return (f"{path} was written by {who} (schema {version}; this program knows up to "
                f"{SCHEMA_VERSION}). Upgrade ikigai; the file was not changed.")
    if version == 0 or not ours:
        return f"{path} is an SQLite database of another program; refusing to change it"
    return None


def refuse_foreign(path: Path, st: os.stat_result) -> None:
    """Raise StoreError for an existing file that is not an ikigai database, before
    anything may touch it: no connection that could make SQLite's -wal and -shm beside
    another program's file, switch it to WAL or migrate it. The header tells a file
    that is not SQLite; the schema is read through an immutable connection (no locks,
    no side files) when no write-ahead log is there to be read too. A file that cannot
    be read here is left to the ordinary open, which says what is wrong with it."""
    if st.st_size == 0:
        return  # new
    try:
        with open(path, "rb") as handle:
            header = handle.read(len(SQLITE_MAGIC))
    except OSError:
        return
    if header != SQLITE_MAGIC:
        raise StoreError(f"{path} is not an ikigai database: it is not an SQLite file, "
                         "or its first page is damaged; it was not changed")
    wal, _ = sidecars(path)
    if wal.exists():
        return  # being written (or not yet merged): only a normal connection reads it all
    try:
        db = sqlite3.connect(read_only_uri(path, immutable=True), uri=True)
        try:
            version = int(db.execute("PRAGMA user_version").fetchone()[0])
            tables = frozenset(name for (name,) in db.execute(_TABLES))
        finally:
            db.close()
    except sqlite3.Error:
        return  # damaged, say: the ordinary open names the problem and the way out
    if problem := foreign_problem(path, version, tables):
        raise StoreError(problem)


class _NeedsImmutable(Exception):
    """A read-only open must be retried as immutable (see LogFile._open_readonly)."""


class LogFile:
    """An open connection to the log's file; Store adds the writes and the reads."""

    def __init__(self, db: aiosqlite.Connection, path: Path, *, readonly: bool = False) -> None:
        self._db = db
        self.path = path
        self.readonly = readonly
        self.immutable = False
        self.version = SCHEMA_VERSION

    # -- opening ---------------------------------------------------------------

    @classmethod
    async def open(cls, path: str | os.PathLike, *, create: bool = True,
                   readonly: bool = False) -> Self:
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
        else:
            # Known to be an ikigai database (or new) before anything may touch it.
            refuse_foreign(path, st)
            if not readonly and (problem := write_problem(path, st)):
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
                          readonly: bool = False, immutable: bool = False) -> Self:
        store = cls(db, path, readonly=readonly)
        store.immutable = immutable
        try:
            await store._configure()
        except BaseException:
            await db.close()
            raise
        return store

    @classmethod
    async def _open_readonly(cls, path: Path) -> Self:
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
                    "folder or mount); copy the database and its -wal file to a writable folder"
                ) from exc
            raise translate(exc, self.path) from exc
        self.version = version
        # Checked before any PRAGMA that writes: such files are left untouched.
        if problem := foreign_problem(self.path, version, tables):
            raise StoreError(problem)
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
            if version:
                await self._tell_of_upgrade(version)
            await self._migrate()
            self.version = SCHEMA_VERSION

    async def _tell_of_upgrade(self, version: int) -> None:
        """One line on the terminal before a long upgrade: migration 9 makes the full-text
        index again (about 3 s per 100,000 messages), and a user would otherwise wait at
        a blank terminal. Written to the terminal itself (descriptor 2): the full screen
        is not up yet, and Textual's capture of sys.stderr would swallow it."""
        if version >= 9:
            return
        rows = await self._db.execute_fetchall("SELECT max(id) FROM events")
        messages = int(list(rows)[0][0] or 0)
        if messages < UPGRADE_NOTICE_FROM:
            return
        line = (f"ikigai: upgrading {self.path} once (its search index, {messages:,} events: "
                f"about {max(1, round(messages * 3e-5))} s)...\n")
        with contextlib.suppress(OSError):
            os.write(2, line.encode("utf-8", "replace"))

    async def _inspect(self) -> tuple[int, frozenset[str]]:
        """user_version and the tables, from one consistent snapshot (another process
        may be creating the schema right now: it sets both in one transaction)."""
        db = self._db
        await db.execute("BEGIN")
        try:
            version = await self._user_version()
            rows = await db.execute_fetchall(_TABLES)
            return version, frozenset(name for (name,) in rows)
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
        except sqlite3.IntegrityError as exc:
            raise ConflictError(str(exc)) from exc
        except sqlite3.DatabaseError as exc:
            raise translate(exc, self.path) from exc

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """As _reading; IntegrityError (a constraint: a name taken, an unknown agent)
        becomes ConflictError, the caller's to handle."""
        try:
            yield
        except sqlite3.IntegrityError as exc:
            raise ConflictError(str(exc)) from exc
        except sqlite3.DatabaseError as exc:
            raise translate(exc, self.path, writing=True) from exc

    async def _in_connection(self, job: Callable[[sqlite3.Connection], T]) -> T:
        """`job(connection)` run in the connection's own thread, in one go: a long read
        whose rows are decoded as they come (sqlite3 releases the GIL while it steps)
        makes no round trip through the event loop per batch, which a busy loop (the
        first frames being drawn) would hold up. aiosqlite 0.22 (pinned) has no public
        way to do it: `_execute` queues a call for its thread, `_conn` is the sqlite3
        connection that thread owns."""
        db = self._db
        return await db._execute(lambda: job(db._conn))

    async def _fetch(self, sql: str, params: Iterable[Any] = ()) -> list:
        with self._reading():
            return list(await self._db.execute_fetchall(sql, params))
