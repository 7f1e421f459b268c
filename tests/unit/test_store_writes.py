"""The SQLite event log (SPEC §3), writing: events are immutable (UPDATE, DELETE and
INSERT OR REPLACE refused underneath the Store); concurrent writes all land with unique,
increasing ids in few group-committed transactions; a bad batch fails alone among good
ones; a failing commit hook never duplicates nor fails a batch; event refs resolve within
their batch; writes after close are refused; a written event survives reopening.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

import pytest

from ikigai_tui.core.events import AgentRecord, EventRef, WriteBatch
from ikigai_tui.core.ports import StoreError
from ikigai_tui.store.sqlite.store import Store
from tests.unit.store_helpers import agent_record, open_with_agents, sqlite_connection


# -- immutability ----------------------------------------------------------------


async def _db_with_events(path: Path) -> list:
    store = await open_with_agents(path, "a")
    try:
        batch = WriteBatch()
        batch.add("a", "user", {"content": "original question"})
        batch.add("a", "assistant", {"content": "original answer"})
        return await store.write(batch)
    finally:
        await store.close()


async def test_events_refuse_update(tmp_path):
    path = tmp_path / "x.db"
    events = await _db_with_events(path)
    conn = sqlite_connection(path)
    try:
        with pytest.raises(sqlite3.DatabaseError, match="immutable"):
            conn.execute("UPDATE events SET payload = '{\"content\":\"edited\"}' WHERE id = ?",
                         (events[0].id,))
        with pytest.raises(sqlite3.DatabaseError, match="immutable"):
            conn.execute("UPDATE events SET kind = 'assistant'")
        rows = conn.execute("SELECT id, kind, payload FROM events ORDER BY id").fetchall()
    finally:
        conn.close()
    assert [(i, k, json.loads(p)) for i, k, p in rows] == [
        (e.id, e.kind, e.payload) for e in events
    ]


async def test_events_refuse_delete(tmp_path):
    path = tmp_path / "x.db"
    events = await _db_with_events(path)
    conn = sqlite_connection(path)
    try:
        with pytest.raises(sqlite3.DatabaseError, match="immutable"):
            conn.execute("DELETE FROM events WHERE id = ?", (events[1].id,))
        with pytest.raises(sqlite3.DatabaseError, match="immutable"):
            conn.execute("DELETE FROM events")
        assert conn.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 2
    finally:
        conn.close()


async def test_events_refuse_replacement_by_insert_or_replace(tmp_path):
    """REPLACE deletes the old row without firing DELETE triggers (unless
    recursive_triggers is on): the immutability guarantee must cover it too."""
    path = tmp_path / "x.db"
    events = await _db_with_events(path)
    conn = sqlite_connection(path)
    try:
        with pytest.raises(sqlite3.DatabaseError):
            conn.execute(
                "INSERT OR REPLACE INTO events (id, agent_id, kind, payload, created_at) "
                "VALUES (?, 'a', 'user', '{\"content\":\"forged\"}', 0)", (events[0].id,))
        row = conn.execute("SELECT payload FROM events WHERE id = ?", (events[0].id,)).fetchone()
    finally:
        conn.close()
    assert json.loads(row[0]) == {"content": "original question"}


# -- writing: ids, atomicity, group commit -------------------------------------------


async def test_concurrent_writes_all_land_with_unique_increasing_ids(tmp_path):
    store = await open_with_agents(tmp_path / "x.db", "a", "b")
    commits: list[list[int]] = []
    store.add_commit_hook(lambda events, agents, updates: commits.append([e.id for e in events]))
    try:
        n = 200

        async def one(i: int):
            batch = WriteBatch()
            agent = "a" if i % 2 else "b"
            batch.add(agent, "user", {"content": f"question {i}"})
            batch.add(agent, "assistant", {"content": f"answer {i}"})
            batch.add(agent, "usage", {"model": "offline", "input_tokens": i, "output_tokens": 1})
            if i % 10 == 0:
                await asyncio.sleep(0)
            return await store.write(batch)

        results = await asyncio.gather(*(one(i) for i in range(n)))
        all_ids = [e.id for events in results for e in events]
        assert len(all_ids) == 3 * n
        assert len(set(all_ids)) == 3 * n
        for i, events in enumerate(results):
            assert [e.kind for e in events] == ["user", "assistant", "usage"]
            assert events[0].payload == {"content": f"question {i}"}
            assert events[0].id < events[1].id < events[2].id
        # Each writer's later batch gets larger ids than its earlier one.
        later = await asyncio.gather(*(store.append("a", "user", {"content": f"late {i}"})
                                       for i in range(5)))
        assert min(e.id for e in later) > max(all_ids)
        assert [e.id for e in later] == sorted(e.id for e in later)

        stored = await store.events()
        assert len(stored) == 3 * n + 5
        assert [e.id for e in stored] == sorted(e.id for e in stored)
        by_id = {e.id: e for e in stored}
        for events in results:
            for e in events:
                assert by_id[e.id].kind == e.kind and by_id[e.id].payload == e.payload
                assert by_id[e.id].agent_id == e.agent_id
        # Group commit: far fewer transactions than batches, each reported in id order.
        flat = [i for ids in commits for i in ids]
        assert flat == sorted(flat) and len(flat) == 3 * n + 5
        assert len(commits) <= 20, f"{len(commits)} transactions for {n + 5} concurrent batches"
    finally:
        await store.close()


@pytest.mark.parametrize("violation", ["duplicate_agent_id", "unknown_parent", "duplicate_name"])
async def test_a_bad_batch_fails_alone_among_concurrent_good_ones(tmp_path, violation):
    store = await Store.open(tmp_path / "x.db")
    first = WriteBatch()
    first.new_agents.append(agent_record("a", name="alpha"))
    await store.write(first)
    try:
        bad_agent = {
            "duplicate_agent_id": agent_record("a"),
            "unknown_parent": agent_record("orphan", parent="nobody"),
            "duplicate_name": agent_record("other", name="alpha"),
        }[violation]

        def good(i: int) -> WriteBatch:
            batch = WriteBatch()
            batch.new_agents.append(agent_record(f"good{i}", parent="a"))
            batch.add(f"good{i}", "user", {"content": f"good {i}"})
            batch.add("a", "assistant", {"content": f"good reply {i}"})
            return batch

        bad = WriteBatch()
        bad.new_agents.append(bad_agent)
        bad.add("a", "user", {"content": "from the bad batch"})
        bad.add(bad_agent.id, "assistant", {"content": "bad batch, its own agent"})

        batches = [good(i) for i in range(5)] + [bad] + [good(i) for i in range(5, 10)]
        results = await asyncio.gather(*(store.write(b) for b in batches), return_exceptions=True)
        assert isinstance(results[5], Exception), results[5]
        for i, r in enumerate(results):
            if i != 5:
                assert not isinstance(r, BaseException), r
                assert [e.kind for e in r] == ["user", "assistant"]
        contents = [e.payload["content"] for e in await store.events()]
        assert "from the bad batch" not in contents
        assert "bad batch, its own agent" not in contents
        assert len(contents) == 20
        assert sorted(c for c in contents if c.startswith("good ") and "reply" not in c) == sorted(
            f"good {i}" for i in range(10))
        agents = {a.id: a for a in await store.agents()}
        assert set(agents) == {"a"} | {f"good{i}" for i in range(10)}
        assert agents["a"].name == "alpha" and agents["a"].parent_id is None
        assert await store.integrity_check() == "ok"
    finally:
        await store.close()


async def test_a_failing_commit_hook_never_duplicates_or_fails_committed_batches(tmp_path):
    store = await open_with_agents(tmp_path / "x.db", "a")
    calls = []

    def hook(events, agents, updates):
        calls.append(len(events))
        if len(calls) == 1:
            raise RuntimeError("a listener broke")

    store.add_commit_hook(hook)
    try:
        results = await asyncio.gather(
            *(store.append("a", "user", {"content": f"m{i}"}) for i in range(4)),
            return_exceptions=True,
        )
        contents = [e.payload["content"] for e in await store.events()]
        assert sorted(contents) == [f"m{i}" for i in range(4)], contents
        assert all(not isinstance(r, BaseException) for r in results), results
    finally:
        await store.close()


async def test_event_refs_resolve_to_ids_within_the_same_batch(tmp_path):
    store = await open_with_agents(tmp_path / "x.db", "a", "b")
    try:
        # Another batch committed in the same group shifts ids: refs must still be local.
        noise = WriteBatch()
        for i in range(3):
            noise.add("b", "user", {"content": f"noise {i}"})
        batch = WriteBatch()
        batch.add("a", "user", {"content": "run a tool"})
        call = batch.add("a", "tool_call", {"call_id": "c1", "name": "slash", "arguments": "{}"})
        batch.add("a", "tool_result", {"call_id": "c1", "call_event": EventRef(call),
                                       "content": "ok", "is_error": False})
        fork_side = batch.add("a", "fork", {"child": "kid", "mark": None, "mark_event": None})
        batch.new_agents.append(AgentRecord("kid", "a", None, "offline", "idle", 0.0,
                                            EventRef(fork_side), None))  # type: ignore[arg-type]
        batch.add("kid", "fork", {"parent": "a", "parent_event": EventRef(fork_side)})
        _, events = await asyncio.gather(store.write(noise), store.write(batch))
        call_id = events[1].id
        assert events[2].payload["call_event"] == call_id
        assert events[4].payload["parent_event"] == events[3].id
        stored = {e.id: e for e in await store.events()}
        assert stored[events[2].id].payload["call_event"] == call_id
        assert stored[events[4].id].payload["parent_event"] == events[3].id
        assert stored[call_id].kind == "tool_call"
        kid = next(a for a in await store.agents() if a.id == "kid")
        assert kid.fork_event_id == events[3].id
        assert kid.created_at > 0  # 0.0 means "now"
        assert isinstance(kid.fork_event_id, int)
    finally:
        await store.close()


async def test_writes_after_close_are_refused(tmp_path):
    store = await open_with_agents(tmp_path / "x.db", "a")
    await store.close()
    with pytest.raises(StoreError):
        await store.append("a", "user", {"content": "too late"})


async def test_a_written_event_survives_reopening(tmp_path):
    path = tmp_path / "x.db"
    store = await open_with_agents(path, "a")
    event = await store.append("a", "user", {"content": "durable ✓ ünïcode"})
    await store.close()
    store = await Store.open(path, create=False)
    try:
        (again,) = await store.events()
        assert (again.id, again.agent_id, again.kind, again.payload) == (
            event.id, "a", "user", {"content": "durable ✓ ünïcode"})
        assert await store.agent_rows("a") == [(event.id, "user", {"content": "durable ✓ ünïcode"})]
    finally:
        await store.close()
