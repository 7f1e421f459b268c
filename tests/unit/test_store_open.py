"""The SQLite event log (SPEC §3), opening a file: the modes of new and existing files and
folders, the pragmas (WAL, user_version, foreign keys), a newer database, a non-database
or another program's SQLite file and a missing file or a folder each refused with a clear
StoreError and left as they were, migration from version 0, and several stores racing to
create the same new database.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import sqlite3
import stat
from pathlib import Path

import pytest

from ikigai_tui.core.events import WriteBatch
from ikigai_tui.core.ports import ConflictError, StoreError
from ikigai_tui.store.sqlite.schema import SCHEMA_VERSION
from ikigai_tui.store.sqlite.store import Store
from tests.unit.store_helpers import agent_record, open_with_agents, sqlite_connection


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _sidecars(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.iterdir() if p.name != path.name
                  and p.name.startswith(path.name))


# -- files and pragmas ---------------------------------------------------------


async def test_new_database_file_is_0600_and_new_folder_0700(tmp_path):
    folder = tmp_path / "fresh" / "data"
    path = folder / "ikigai.db"
    store = await open_with_agents(path, "a")
    try:
        await store.append("a", "user", {"content": "secret-ish"})
        assert _mode(path) == 0o600
        assert _mode(folder) == 0o700
        # SQLite's own side files hold the same data: they must not be wider than the db.
        for name in _sidecars(path):
            assert _mode(folder / name) & 0o077 == 0, f"{name} is {oct(_mode(folder / name))}"
    finally:
        await store.close()
    assert _mode(path) == 0o600


async def test_new_database_mode_ignores_a_permissive_umask(tmp_path):
    """Every folder made (all the missing parents, not only the last) is 0700, the file
    and SQLite's -wal and -shm 0600, even under umask 000."""
    old = os.umask(0)
    try:
        store = await Store.open(tmp_path / "a" / "b" / "newdir" / "x.db")
        try:
            await store.write(WriteBatch())
            sidecars = _sidecars(tmp_path / "a" / "b" / "newdir" / "x.db")
            modes = {name: _mode(tmp_path / "a" / "b" / "newdir" / name) for name in sidecars}
        finally:
            await store.close()
    finally:
        os.umask(old)
    assert sidecars == ["x.db-shm", "x.db-wal"]
    assert modes == {"x.db-shm": 0o600, "x.db-wal": 0o600}
    assert _mode(tmp_path / "a" / "b" / "newdir" / "x.db") == 0o600
    for folder in ("a", "a/b", "a/b/newdir"):
        assert _mode(tmp_path / folder) == 0o700, folder


async def test_new_folders_are_0700_even_under_a_umask_that_removes_owner_bits(tmp_path):
    old = os.umask(0o277)  # mkdir alone would make 0500 folders: no file could go in
    try:
        store = await Store.open(tmp_path / "p" / "q" / "x.db")
        await store.close()
    finally:
        os.umask(old)
    assert _mode(tmp_path / "p") == _mode(tmp_path / "p" / "q") == 0o700
    assert _mode(tmp_path / "p" / "q" / "x.db") == 0o600


async def test_an_existing_folder_keeps_its_mode(tmp_path):
    folder = tmp_path / "shared"
    folder.mkdir()
    os.chmod(folder, 0o755)
    store = await Store.open(folder / "x.db")
    await store.close()
    assert _mode(folder) == 0o755
    assert _mode(folder / "x.db") == 0o600


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o660])
async def test_an_existing_database_keeps_its_mode(tmp_path, mode):
    """The program never changes the mode of a file it did not create (the user chose it)."""
    path = tmp_path / "old.db"
    store = await Store.open(path)
    await store.close()
    os.chmod(path, mode)
    store = await open_with_agents(path, "a")
    try:
        await store.append("a", "user", {"content": "written after the chmod"})
    finally:
        await store.close()
    assert _mode(path) == mode


async def test_journal_mode_is_wal_and_user_version_is_current(tmp_path):
    path = tmp_path / "x.db"
    store = await Store.open(path)
    try:
        conn = sqlite_connection(path)
        try:
            assert conn.execute("PRAGMA journal_mode").fetchone()[0].lower() == "wal"
            assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
            assert {"agents", "events", "message_fts"} <= tables
        finally:
            conn.close()
    finally:
        await store.close()


async def test_foreign_keys_are_enforced_an_event_for_an_unknown_agent_is_refused(tmp_path):
    store = await open_with_agents(tmp_path / "x.db", "a")
    try:
        with pytest.raises(ConflictError):
            await store.append("no-such-agent", "user", {"content": "orphan"})
        assert await store.count_events() == 0
        # The store keeps working after a refused batch.
        event = await store.append("a", "user", {"content": "fine"})
        assert event.id >= 1 and await store.count_events() == 1
    finally:
        await store.close()


# -- versions and bad files ----------------------------------------------------


def _make_newer_database(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE future_things (x TEXT)")
    conn.execute("INSERT INTO future_things VALUES ('from the future')")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.commit()
    conn.close()


async def test_newer_database_is_refused_naming_both_versions_and_left_byte_identical(tmp_path):
    path = tmp_path / "newer.db"
    _make_newer_database(path)
    before = _sha256(path)
    stat_before = path.stat()
    with pytest.raises(StoreError) as info:
        await Store.open(path)
    message = str(info.value)
    assert str(SCHEMA_VERSION + 1) in message
    assert str(SCHEMA_VERSION) in message
    assert "newer" in message.lower()
    assert _sha256(path) == before
    assert path.stat().st_size == stat_before.st_size
    assert path.stat().st_mtime_ns == stat_before.st_mtime_ns
    assert _sidecars(path) == [], "opening a refused database created side files"
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0].lower() == "delete"
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION + 1
    finally:
        conn.close()


async def test_newer_database_is_refused_also_with_create_false(tmp_path):
    path = tmp_path / "newer.db"
    _make_newer_database(path)
    before = _sha256(path)
    with pytest.raises(StoreError, match=str(SCHEMA_VERSION + 1)):
        await Store.open(path, create=False)
    assert _sha256(path) == before


async def test_non_database_file_gives_a_clear_store_error_and_is_not_changed(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("These are my notes, not a database.\n" * 200)
    before = _sha256(path)
    with pytest.raises(StoreError) as info:
        await Store.open(path)
    message = str(info.value)
    assert str(path) in message
    assert "database" in message.lower()
    assert _sha256(path) == before
    assert _sidecars(path) == []


async def test_foreign_sqlite_database_gives_a_store_error_and_is_not_changed(tmp_path):
    """Another program's SQLite file (user_version 0, its own `agents` table) is bad input:
    a clear StoreError and nothing written (SPEC §13), not a raw sqlite3 error."""
    path = tmp_path / "other-app.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE agents (codename TEXT, licence INTEGER)")
    conn.execute("INSERT INTO agents VALUES ('bond', 7)")
    conn.commit()
    conn.close()
    before = _sha256(path)
    with pytest.raises(StoreError):
        await Store.open(path)
    assert _sha256(path) == before
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("SELECT * FROM agents").fetchall() == [("bond", 7)]
        assert conn.execute("PRAGMA journal_mode").fetchone()[0].lower() == "delete"
    finally:
        conn.close()


async def test_missing_file_with_create_false_is_an_error_and_creates_nothing(tmp_path):
    path = tmp_path / "nowhere" / "x.db"
    with pytest.raises(StoreError, match="no database"):
        await Store.open(path, create=False)
    assert not path.exists()
    assert not path.parent.exists()


async def test_folder_instead_of_file_is_a_store_error(tmp_path):
    with pytest.raises(StoreError, match="folder"):
        await Store.open(tmp_path)


async def test_migration_from_version_0_on_an_empty_file(tmp_path):
    path = tmp_path / "empty.db"
    path.touch()
    store = await Store.open(path)
    try:
        batch = WriteBatch()
        batch.new_agents.append(agent_record("a"))
        batch.add("a", "user", {"content": "hello after migration"})
        events = await store.write(batch)
        assert [e.kind for e in await store.events()] == ["user"]
        assert events[0].id == (await store.events())[0].id
        assert [e.id for e in await store.search("migration", ["a"])] == [events[0].id]
    finally:
        await store.close()
    conn = sqlite_connection(path)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    finally:
        conn.close()


async def test_migration_from_version_0_on_an_empty_sqlite_database(tmp_path):
    path = tmp_path / "blank.db"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 0")
    conn.execute("VACUUM")  # materialise the header: a real, empty SQLite file
    conn.close()
    assert path.stat().st_size > 0
    store = await open_with_agents(path, "a")
    try:
        await store.append("a", "user", {"content": "x"})
        assert await store.count_events() == 1
        assert await store.integrity_check() == "ok"
    finally:
        await store.close()
    # Re-opening an up-to-date database migrates nothing and keeps the data.
    store = await Store.open(path)
    try:
        assert await store.count_events() == 1
        assert [a.id for a in await store.agents()] == ["a"]
    finally:
        await store.close()


async def test_several_stores_opening_a_new_database_at_once_all_succeed(tmp_path):
    """Connections racing to create and migrate the same new file (a race: tried a few
    times) all open it; the schema is created once and every connection can write."""
    for attempt in range(6):
        path = tmp_path / f"race{attempt}.db"
        results = await asyncio.gather(*(Store.open(path) for _ in range(4)),
                                       return_exceptions=True)
        stores = [r for r in results if isinstance(r, Store)]
        try:
            errors = [r for r in results if not isinstance(r, Store)]
            assert not errors, f"attempt {attempt}: {errors}"
            batch = WriteBatch()
            batch.new_agents.append(agent_record("a"))
            await stores[0].write(batch)
            for k, store in enumerate(stores):
                await store.append("a", "user", {"content": f"from connection {k}"})
            assert await stores[-1].count_events() == len(stores)
            assert await stores[0].integrity_check() == "ok"
        finally:
            for store in stores:
                await store.close()
