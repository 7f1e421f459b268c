"""The full-text index's prefix indexes (schema 9): find asks for words of one or two
letters as typed ("k"*), which FTS5 answers from a prefix index instead of merging every
term that starts with them. A log of schema 8 is re-indexed when opened for writing, in
one transaction: the same hits in the same order after it, the messages written later
indexed too; a migration that fails, or a process killed midway, leaves the log of
schema 8 as it was, readable, and migrated by the next open."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ikigai_tui.core.ports import StoreError
from ikigai_tui.store.sqlite.schema import FTS_PREFIXES, MIGRATIONS, SCHEMA_VERSION
from ikigai_tui.store.sqlite.store import Store
from tests.unit.store_helpers import log_of_schema, sqlite_connection

REPO = Path(__file__).resolve().parents[2]
OLD = 8
EVENTS = [
    ("a", "system", {"content": "you are a kind keeper of kiwis"}),
    ("a", "user", {"content": "Meet me at the Café Müller, Karl"}),
    ("a", "assistant", {"content": "ripe kumquats in August", "model": "m"}),
    ("a", "tool_call", {"name": "read", "arguments": "{\"path\": \"kitchen/menu\"}", "call_id": "c1"}),
    ("a", "tool_result", {"content": "muesli and kale", "call_id": "c1"}),
    ("a", "mark", {"name": "kilo"}),  # metadata: never indexed
    ("a", "interrupted", {"content": "kept out of the index"}),
    ("b", "user", {"content": "another kiwi, in agent b"}),
    ("a", "user", {"content": "kiwis, MUESLI, and a café"}),
]
QUERIES = ['"k"*', '"ki"*', '"kiw"*', '"m"*', '"mu"*', '"c"* "m"*', '"kiwis"', '"a"* "k"*',
           '"z"*', '"ké"*']


def _table_sql(path) -> str:
    conn = sqlite_connection(path)
    try:
        return conn.execute("SELECT sql FROM sqlite_master WHERE name = 'message_fts'").fetchone()[0]
    finally:
        conn.close()


def _version(path) -> int:
    conn = sqlite_connection(path)
    try:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])
    finally:
        conn.close()


def _hits(path) -> dict[str, list[int]]:
    """Each query's ids, newest first, read from the index directly."""
    conn = sqlite_connection(path)
    try:
        return {q: [r for (r,) in conn.execute(
            "SELECT rowid FROM message_fts WHERE message_fts MATCH ? ORDER BY rowid DESC", (q,))]
            for q in QUERIES}
    finally:
        conn.close()


async def _keys(store: Store) -> dict[str, list[int]]:
    return {q: [k for k, _agent in await store.search_keys(q, ["a", "b"])] for q in QUERIES}


def _old_log(path) -> dict[str, list[int]]:
    log_of_schema(path, OLD, EVENTS)
    before = _hits(path)
    # The words found before: each query's hits are the messages with a word it starts.
    assert before['"k"*'] == [9, 8, 5, 4, 3, 2, 1]
    assert before['"ki"*'] == [9, 8, 4, 1]
    assert before['"mu"*'] == [9, 5, 2]
    assert before['"c"* "m"*'] == [9, 2]
    return before


async def test_a_schema_8_log_is_reindexed_with_prefix_indexes_and_finds_the_same(tmp_path):
    path = tmp_path / "log.db"
    before = _old_log(path)
    assert "prefix" not in _table_sql(path)
    store = await Store.open(path)
    try:
        assert store.version == SCHEMA_VERSION >= 9
        assert await _keys(store) == before
        await store.append("a", "user", {"content": "a zebra and a kiwi"})  # the trigger again
        after = await _keys(store)
        assert after['"z"*'] == [10] and after['"k"*'] == [10, *before['"k"*']]
    finally:
        await store.close()
    assert _version(path) == SCHEMA_VERSION
    assert f"prefix='{FTS_PREFIXES}'" in _table_sql(path)


async def test_a_new_log_has_the_prefix_indexes(tmp_path):
    path = tmp_path / "new.db"
    store = await Store.open(path)
    await store.close()
    assert f"prefix='{FTS_PREFIXES}'" in _table_sql(path)


async def test_a_failed_migration_leaves_the_old_log_as_it_was(tmp_path, monkeypatch):
    path = tmp_path / "log.db"
    before = _old_log(path)
    monkeypatch.setitem(MIGRATIONS, 9, [*MIGRATIONS[9], "INSERT INTO no_such_table VALUES (1)"])
    with pytest.raises(StoreError):
        await Store.open(path)
    assert _version(path) == OLD and "prefix" not in _table_sql(path)
    assert _hits(path) == before
    store = await Store.open(path, readonly=True)  # readable as it was
    try:
        assert store.version == OLD
        assert await _keys(store) == before
    finally:
        await store.close()
    monkeypatch.undo()
    store = await Store.open(path)  # and migrated by the next open
    try:
        assert store.version == SCHEMA_VERSION
        assert await _keys(store) == before
    finally:
        await store.close()


async def test_a_process_killed_midway_through_the_reindex_leaves_the_old_log(tmp_path):
    """Killed after the old index is dropped and the new one filled, before the commit:
    the log is still of schema 8 with its index, and the next open migrates it."""
    path = tmp_path / "log.db"
    before = _old_log(path)
    script = textwrap.dedent(f"""
        import os, sqlite3
        from ikigai_tui.store.sqlite.schema import MIGRATIONS
        conn = sqlite3.connect({str(path)!r}, isolation_level=None)
        conn.execute("PRAGMA cache_size = 1")  # spill the changes into the -wal file
        conn.execute("BEGIN IMMEDIATE")
        for statement in MIGRATIONS[9][:-1]:
            conn.execute(statement)
        os._exit(9)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, cwd=REPO)
    assert done.returncode == 9, done.stderr
    assert _version(path) == OLD and "prefix" not in _table_sql(path)
    assert _hits(path) == before
    store = await Store.open(path)
    try:
        assert store.version == SCHEMA_VERSION
        assert await _keys(store) == before
    finally:
        await store.close()
    assert f"prefix='{FTS_PREFIXES}'" in _table_sql(path)


async def test_a_long_upgrade_says_so_on_the_terminal_first(tmp_path, capfd, monkeypatch):
    """Re-indexing a big log takes seconds (31 at a million messages): one line first, on
    the terminal itself, not a blank wait. A small log, or a new one, upgrades silently."""
    from ikigai_tui.store.sqlite import open as opening

    monkeypatch.setattr(opening, "UPGRADE_NOTICE_FROM", 3)
    events = [("a", "user", {"content": f"message {n}"}) for n in range(3)]
    log_of_schema(tmp_path / "big.db", 8, events)
    log_of_schema(tmp_path / "small.db", 8, events[:2])
    for name in ("big.db", "small.db", "new.db"):
        store = await Store.open(tmp_path / name, create=True)
        await store.close()
        said = capfd.readouterr().err
        if name == "big.db":
            assert "upgrading" in said and "big.db" in said and "3 events" in said
        else:
            assert said == ""
