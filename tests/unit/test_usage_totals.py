"""Every agent's usage so far is kept summed by the schema (usage_totals, schema 7): a
trigger adds each usage event as it is written, an older log is summed once when it is
migrated, and an older file opened read-only is summed from its events instead. The
totals always equal a plain sum of the usage events (`agents` on a million events read
every usage event: 1.7 s; now a few rows)."""

from __future__ import annotations

import json
import sqlite3

from ikigai_tui.core.events import WriteBatch
from ikigai_tui.store.sqlite.schema import MIGRATIONS
from ikigai_tui.store.sqlite.store import USAGE_SCHEMA, Store
from ikigai_tui.core.usage.ledger import TIER

from .store_helpers import agent_record, open_with_agents

REPORTS = [("a1", "openai/gpt-4o", 1_000, 10), ("a1", "openai/gpt-4o", 2_000, 20),
           ("a1", "gemini/gemini-2.5-pro", TIER + 1, 30), ("a1", "gemini/gemini-2.5-pro", 5, 1),
           ("a2", None, 7, 3), ("a2", "offline", 100, 50)]


def _expected(reports) -> list[tuple[str, str, bool, int, int]]:
    sums: dict[tuple[str, str, bool], list[int]] = {}
    for agent, model, given_in, given_out in reports:
        group = sums.setdefault((agent, model or "", given_in > TIER), [0, 0])
        group[0] += given_in
        group[1] += given_out
    return sorted((*key, i, o) for key, (i, o) in sums.items())


def _usage_batch(reports) -> WriteBatch:
    batch = WriteBatch()
    for agent, model, given_in, given_out in reports:
        payload = {"input_tokens": given_in, "output_tokens": given_out}
        if model is not None:
            payload["model"] = model
        batch.add(agent, "usage", payload)
        batch.add(agent, "user", {"content": "not usage"})
    return batch


async def test_the_totals_follow_every_usage_event_written(db_path):
    store = await open_with_agents(db_path, "a1", "a2")
    try:
        assert await store.usage_sums(TIER) == []
        await store.write(_usage_batch(REPORTS[:3]))
        assert sorted(await store.usage_sums(TIER)) == _expected(REPORTS[:3])
        await store.write(_usage_batch(REPORTS[3:]))
        assert sorted(await store.usage_sums(TIER)) == _expected(REPORTS)
        # Another tier is summed from the events themselves, and agrees where it can.
        assert sorted(await store.usage_sums(TIER * 10)) == sorted(
            (a, m, False, i, o) for a, m, i, o in _grouped_without_tier(REPORTS))
    finally:
        await store.close()


def _grouped_without_tier(reports):
    sums: dict[tuple[str, str], list[int]] = {}
    for agent, model, given_in, given_out in reports:
        group = sums.setdefault((agent, model or ""), [0, 0])
        group[0] += given_in
        group[1] += given_out
    return [(*key, i, o) for key, (i, o) in sums.items()]


def _old_log(path, reports) -> None:
    """A log at schema 6 (before usage_totals) holding these usage reports."""
    conn = sqlite3.connect(path)
    for version in range(1, USAGE_SCHEMA):
        for statement in MIGRATIONS[version]:
            conn.execute(statement)
    conn.execute(f"PRAGMA user_version = {USAGE_SCHEMA - 1}")
    for agent in sorted({r[0] for r in reports}):
        a = agent_record(agent)
        conn.execute("INSERT INTO agents (id, parent_id, name, model, status, created_at) "
                     "VALUES (?, ?, ?, ?, ?, ?)", (a.id, None, None, a.model, a.status, a.created_at))
    for agent, model, given_in, given_out in reports:
        payload = {"input_tokens": given_in, "output_tokens": given_out}
        if model is not None:
            payload["model"] = model
        conn.execute("INSERT INTO events (agent_id, kind, payload, created_at) VALUES (?, 'usage', ?, 0)",
                     (agent, json.dumps(payload)))
    conn.commit()
    conn.close()


async def test_an_older_log_is_summed_when_migrated_and_read_only_from_its_events(db_path):
    _old_log(db_path, REPORTS)
    readonly = await Store.open(db_path, readonly=True)
    try:
        assert readonly.version == USAGE_SCHEMA - 1  # never migrated by a reader
        assert sorted(await readonly.usage_sums(TIER)) == _expected(REPORTS)
    finally:
        await readonly.close()
    store = await Store.open(db_path)
    try:
        assert store.version >= USAGE_SCHEMA
        rows = sqlite3.connect(db_path).execute("SELECT COUNT(*) FROM usage_totals").fetchone()
        assert rows[0] == len(_expected(REPORTS))  # summed once, at the migration
        assert sorted(await store.usage_sums(TIER)) == _expected(REPORTS)
        await store.write(_usage_batch(REPORTS[:1]))
        assert sorted(await store.usage_sums(TIER)) == _expected(REPORTS + REPORTS[:1])
    finally:
        await store.close()
