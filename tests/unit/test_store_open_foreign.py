"""A file that is not an ikigai database is left exactly as it was (issue 13, item 12):
its bytes, its mode, its time, and no -wal or -shm beside it, whether it is opened for
writing (`run`, the full screen) or read-only (the reports); the error says what it is."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import stat
from pathlib import Path

import pytest

from ikigai_tui.store.sqlite.schema import SCHEMA_VERSION
from ikigai_tui.core.ports import StoreError
from ikigai_tui.store.sqlite.store import Store
from tests.conftest import run_ikigai


def _sqlite(path: Path, *, version: int = 0, wal: bool = False) -> None:
    conn = sqlite3.connect(path)
    if wal:
        conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE TABLE notes (body TEXT)")
    conn.execute("INSERT INTO notes VALUES ('mine, not ikigai''s')")
    conn.execute(f"PRAGMA user_version = {version}")
    conn.commit()
    conn.close()  # the last connection: SQLite merges and removes its -wal and -shm


def _text(path: Path) -> None:
    path.write_text("These are my notes, not a database.\n" * 50)


FILES = {
    "text": (_text, "not an SQLite file"),
    "sqlite-v0": (lambda p: _sqlite(p), "another program"),
    # Another program that numbers its own schema: looked like an old ikigai to migrate.
    "sqlite-v2": (lambda p: _sqlite(p, version=2), "another program"),
    "sqlite-v4-wal": (lambda p: _sqlite(p, version=4, wal=True), "another program"),
    "sqlite-future": (lambda p: _sqlite(p, version=SCHEMA_VERSION + 3), "another program"),
}


def _state(path: Path) -> tuple:
    st = path.stat()
    siblings = sorted(p.name for p in path.parent.iterdir() if p.name != path.name)
    return (hashlib.sha256(path.read_bytes()).hexdigest(), stat.S_IMODE(st.st_mode),
            st.st_mtime_ns, siblings)


@pytest.mark.parametrize("readonly", [False, True], ids=["write", "read-only"])
@pytest.mark.parametrize("kind", list(FILES))
async def test_a_foreign_file_is_refused_and_left_exactly_as_it_was(tmp_path, kind, readonly):
    make, wanted = FILES[kind]
    path = tmp_path / "mine.db"
    make(path)
    os.chmod(path, 0o644)
    before = _state(path)
    with pytest.raises(StoreError) as caught:
        await Store.open(path, readonly=readonly, create=not readonly)
    assert str(path) in str(caught.value) and wanted in str(caught.value)
    assert "not changed" in str(caught.value) or "refusing to change it" in str(caught.value)
    assert _state(path) == before


@pytest.mark.parametrize("kind", list(FILES))
def test_every_command_leaves_a_foreign_file_alone(tmp_path, kind):
    make, wanted = FILES[kind]
    path = tmp_path / "mine.db"
    make(path)
    os.chmod(path, 0o644)
    before = _state(path)
    for command in (["run"], ["--line"], ["log"], ["agents", "--json"], ["context"], ["export"]):
        done = run_ikigai("--db", str(path), *command, input="hello\n")
        assert done.returncode == 1, (command, done.stderr)
        lines = done.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("Error: ") and wanted in lines[0], lines
        assert _state(path) == before, command


async def test_an_ikigai_database_of_an_older_schema_is_still_opened(tmp_path):
    """The check must not refuse our own files: an ikigai database (agents and events
    tables) opens and is migrated as before."""
    path = tmp_path / "ours.db"
    store = await Store.open(path)
    await store.close()
    conn = sqlite3.connect(path)
    assert {"agents", "events"} <= {r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table'")}
    conn.close()
    store = await Store.open(path)
    await store.close()
    store = await Store.open(path, readonly=True, create=False)
    await store.close()
