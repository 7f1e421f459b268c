"""The outlines' index (schema 8): an agent's replay reads each message's outline (its
payload without its text) from an index on an SQL expression, not from the payloads. A
log of schema 7 is migrated when opened for writing (the index made over what it
holds); opened read-only it is left as it is and its outlines are made from the payloads,
the same rows either way."""

from __future__ import annotations

import asyncio
import json
import sqlite3

import pytest

from ikigai_tui.core.replay.bodies import outline_row
from ikigai_tui.store.sqlite.schema import MIGRATIONS, OUTLINE, OUTLINE_INDEX, SCHEMA_VERSION
from ikigai_tui.store.sqlite.store import Store

PAYLOADS = [
    ("user", {"content": "plums and pears"}),
    ("assistant", {"content": "ripe in August", "model": "m"}),
    ("tool_call", {"name": "read", "arguments": "{\"path\": \"a\"}", "call_id": "c1"}),
    ("tool_result", {"content": "file text", "call_id": "c1"}),
    ("mark", {"name": "start"}),
    ("pruned_summary", {"summary": "they talked of plums", "upto": 2}),
    ("user", {"content": "and cherries?", "attachments": ["x"]}),
]


def _log_of_schema(path, version: int) -> None:
    """A log as ikigai wrote it at schema `version`: one agent and PAYLOADS."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    for target in range(1, version + 1):
        for statement in MIGRATIONS[target]:
            conn.execute(statement)
    conn.execute(f"PRAGMA user_version = {version}")
    conn.execute("INSERT INTO agents (id, model, created_at) VALUES ('a', 'offline', 1.0)")
    for n, (kind, payload) in enumerate(PAYLOADS, 1):
        conn.execute("INSERT INTO events (id, agent_id, kind, payload, created_at) "
                     "VALUES (?, 'a', ?, ?, ?)", (n, kind, json.dumps(payload), float(n)))
    conn.close()


def _indexes(path) -> set[str]:
    conn = sqlite3.connect(path)
    try:
        return {n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    finally:
        conn.close()


def _expected(upto: int | None = None) -> list:
    return [outline_row((n, kind, payload)) for n, (kind, payload) in enumerate(PAYLOADS, 1)
            if upto is None or n < upto]


async def test_a_schema_7_log_is_migrated_and_its_outlines_read_from_the_index(tmp_path):
    path = tmp_path / "log.db"
    _log_of_schema(path, 7)
    assert OUTLINE_INDEX not in _indexes(path)
    store = await Store.open(path)
    try:
        assert store.version == SCHEMA_VERSION >= 8
        assert list(await store.agent_outline("a")) == _expected()
        assert list(await store.agent_outline("a", upto=4)) == _expected(4)
    finally:
        await store.close()
    assert OUTLINE_INDEX in _indexes(path)
    conn = sqlite3.connect(path)
    try:  # the replay's query is answered from the index: no payload is read
        plan = conn.execute(f"EXPLAIN QUERY PLAN SELECT id, kind, {OUTLINE} FROM events INDEXED "
                            f"BY {OUTLINE_INDEX} WHERE agent_id = 'a' ORDER BY id").fetchall()
    finally:
        conn.close()
    assert any(OUTLINE_INDEX in row[-1] for row in plan)


async def test_a_schema_7_log_opened_read_only_is_unchanged_and_reads_the_same_outlines(tmp_path):
    path = tmp_path / "log.db"
    _log_of_schema(path, 7)
    store = await Store.open(path, readonly=True)
    try:
        assert store.version == 7
        assert list(await store.agent_outline("a")) == _expected()
    finally:
        await store.close()
    assert OUTLINE_INDEX not in _indexes(path)


async def test_outlines_written_after_the_migration_are_indexed_too(tmp_path):
    path = tmp_path / "log.db"
    _log_of_schema(path, 7)
    store = await Store.open(path)
    await store.close()
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("INSERT INTO events (id, agent_id, kind, payload, created_at) VALUES "
                 "(99, 'a', 'assistant', ?, 99.0)", (json.dumps({"content": "x" * 5000, "n": 1}),))
    conn.close()
    store = await Store.open(path, readonly=True)
    try:
        rows = list(await store.agent_outline("a"))
    finally:
        await store.close()
    assert rows[:-1] == _expected()
    assert rows[-1] == (99, "assistant", {"n": 1})


async def test_a_read_cancelled_midway_ends_its_statement_and_the_log_reads_on(tmp_path, monkeypatch):
    """agent_outline reads in jobs of the connection's thread; cancelled between two, the
    statement it left open is closed (no read transaction holds the write-ahead log)."""
    from ikigai_tui.store.sqlite import rows as rows_module

    monkeypatch.setattr(rows_module, "JOB_ROWS", 4)
    monkeypatch.setattr(rows_module, "ROW_BATCH", 2)
    path = tmp_path / "log.db"
    _log_of_schema(path, 7)
    store = await Store.open(path)
    try:
        jobs = 0
        real = store._in_connection

        async def one_job_then_cancelled(job):
            nonlocal jobs
            jobs += 1
            if jobs == 2:
                raise asyncio.CancelledError
            return await real(job)

        store._in_connection = one_job_then_cancelled
        with pytest.raises(asyncio.CancelledError):
            await store.agent_outline("a")
        del store._in_connection
        busy, _log, _done = await store._in_connection(
            lambda conn: conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone())
        assert busy == 0
        assert list(await store.agent_outline("a")) == _expected()
    finally:
        await store.close()
