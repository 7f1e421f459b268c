"""The SQLite event log (SPEC §3): files, pragmas, versions, immutability, FTS, group commit."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sqlite3
import stat
import time
from pathlib import Path

import pytest

from ikigai_tui.core.events import AgentRecord, EventRef, WriteBatch
from ikigai_tui.core.schema import SCHEMA_VERSION
from ikigai_tui.core.store import Store, StoreError


def _agent(agent_id: str, parent: str | None = None, name: str | None = None) -> AgentRecord:
    return AgentRecord(agent_id, parent, name, "offline", "idle", time.time(), None, None)


async def _open_with_agents(path: Path, *ids: str) -> Store:
    store = await Store.open(path, create=True)
    batch = WriteBatch()
    batch.new_agents.extend(_agent(i) for i in ids)
    await store.write(batch)
    return store


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _sidecars(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.iterdir() if p.name != path.name
                  and p.name.startswith(path.name))


def _sqlite(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None)


# -- files and pragmas ---------------------------------------------------------


async def test_new_database_file_is_0600_and_new_folder_0700(tmp_path):
    folder = tmp_path / "fresh" / "data"
    path = folder / "ikigai.db"
    store = await _open_with_agents(path, "a")
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
    old = os.umask(0)
    try:
        store = await Store.open(tmp_path / "newdir" / "x.db")
        await store.close()
    finally:
        os.umask(old)
    assert _mode(tmp_path / "newdir" / "x.db") == 0o600
    assert _mode(tmp_path / "newdir") == 0o700


async def test_existing_world_readable_database_is_tightened_to_0600(tmp_path):
    path = tmp_path / "old.db"
    store = await Store.open(path)
    await store.close()
    os.chmod(path, 0o644)
    store = await Store.open(path)
    await store.close()
    assert _mode(path) == 0o600


async def test_journal_mode_is_wal_and_user_version_is_current(tmp_path):
    path = tmp_path / "x.db"
    store = await Store.open(path)
    try:
        conn = _sqlite(path)
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
    store = await _open_with_agents(tmp_path / "x.db", "a")
    try:
        with pytest.raises(sqlite3.IntegrityError):
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
        batch.new_agents.append(_agent("a"))
        batch.add("a", "user", {"content": "hello after migration"})
        events = await store.write(batch)
        assert [e.kind for e in await store.events()] == ["user"]
        assert events[0].id == (await store.events())[0].id
        assert [e.id for e in await store.search("migration", ["a"])] == [events[0].id]
    finally:
        await store.close()
    conn = _sqlite(path)
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
    store = await _open_with_agents(path, "a")
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
            batch.new_agents.append(_agent("a"))
            await stores[0].write(batch)
            for k, store in enumerate(stores):
                await store.append("a", "user", {"content": f"from connection {k}"})
            assert await stores[-1].count_events() == len(stores)
            assert await stores[0].integrity_check() == "ok"
        finally:
            for store in stores:
                await store.close()


# -- immutability ----------------------------------------------------------------


async def _db_with_events(path: Path) -> list:
    store = await _open_with_agents(path, "a")
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
    conn = _sqlite(path)
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
    conn = _sqlite(path)
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
    conn = _sqlite(path)
    try:
        with pytest.raises(sqlite3.DatabaseError):
            conn.execute(
                "INSERT OR REPLACE INTO events (id, agent_id, kind, payload, created_at) "
                "VALUES (?, 'a', 'user', '{\"content\":\"forged\"}', 0)", (events[0].id,))
        row = conn.execute("SELECT payload FROM events WHERE id = ?", (events[0].id,)).fetchone()
    finally:
        conn.close()
    assert json.loads(row[0]) == {"content": "original question"}


# -- full-text search ----------------------------------------------------------


async def test_fts_finds_message_text_and_not_metadata(tmp_path):
    store = await _open_with_agents(tmp_path / "x.db", "a", "b")
    try:
        batch = WriteBatch()
        user = batch.add("a", "user", {"content": "tell me about the zebrafish"})
        reply = batch.add("a", "assistant", {"content": "the aardvark digs burrows"})
        call = batch.add("a", "tool_call", {"call_id": "c1", "name": "slash",
                                            "arguments": '{"command": "recall", "args": "xylophone"}'})
        result = batch.add("a", "tool_result", {"call_id": "c1", "call_event": EventRef(call),
                                                "content": "found the quokka", "is_error": False})
        system = batch.add("a", "system", {"content": "you are a narwhal"})
        # Metadata never enters the index, even when a payload has a `content` field.
        batch.add("a", "mark", {"name": "wombat"})
        batch.add("a", "command", {"text": "/mark wombat", "source": "human",
                                   "output": ["Checkpoint 'wombat' created."]})
        batch.add("a", "mail", {"from": "b", "text": "wombat mail"})
        batch.add("a", "compact", {"ids": [], "summary": "wombat summary"})
        batch.add("a", "interrupted", {"content": "wombat content in metadata"})
        batch.add("a", "usage", {"model": "wombat", "input_tokens": 1, "output_tokens": 1})
        batch.add("b", "user", {"content": "another zebrafish, in agent b"})
        events = await store.write(batch)
        ids = [e.id for e in events]

        async def found(query: str, agents=("a",)) -> list[int]:
            return sorted(e.id for e in await store.search(query, list(agents)))

        assert await found("zebrafish") == [ids[user]]
        assert await found("zebrafish", ("a", "b")) == sorted([ids[user], ids[-1]])
        assert await found("zebrafish", ("b",)) == [ids[-1]]
        assert await found("aardvark") == [ids[reply]]
        assert await found("xylophone") == [ids[call]]
        assert await found("quokka") == [ids[result]]
        assert await found("narwhal") == [ids[system]]
        assert await found("wombat") == []
        assert await found("checkpoint") == []
        hits = await store.search("aardvark", ["a"])
        assert hits[0].kind == "assistant" and hits[0].payload["content"].startswith("the aardvark")
    finally:
        await store.close()


async def test_fts_matches_words_case_and_accent_insensitively(tmp_path):
    store = await _open_with_agents(tmp_path / "x.db", "a")
    try:
        event = await store.append("a", "user", {"content": "Meet me at the Café Müller"})
        assert [e.id for e in await store.search("cafe", ["a"])] == [event.id]
        assert [e.id for e in await store.search("MULLER", ["a"])] == [event.id]
        assert await store.search("caf", ["a"]) == []
        assert [e.id for e in await store.search("caf*", ["a"])] == [event.id]
    finally:
        await store.close()


async def test_fts_index_is_transactional_with_the_events(tmp_path):
    """A refused batch leaves nothing searchable behind."""
    store = await _open_with_agents(tmp_path / "x.db", "a")
    try:
        bad = WriteBatch()
        bad.add("a", "user", {"content": "phantomword appears"})
        bad.add("missing-agent", "user", {"content": "never"})
        with pytest.raises(sqlite3.DatabaseError):
            await store.write(bad)
        assert await store.search("phantomword", ["a"]) == []
        assert await store.count_events() == 0
    finally:
        await store.close()


# -- writing: ids, atomicity, group commit -------------------------------------------


async def test_concurrent_writes_all_land_with_unique_increasing_ids(tmp_path):
    store = await _open_with_agents(tmp_path / "x.db", "a", "b")
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
    first.new_agents.append(_agent("a", name="alpha"))
    await store.write(first)
    try:
        bad_agent = {
            "duplicate_agent_id": _agent("a"),
            "unknown_parent": _agent("orphan", parent="nobody"),
            "duplicate_name": _agent("other", name="alpha"),
        }[violation]

        def good(i: int) -> WriteBatch:
            batch = WriteBatch()
            batch.new_agents.append(_agent(f"good{i}", parent="a"))
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
    store = await _open_with_agents(tmp_path / "x.db", "a")
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
    store = await _open_with_agents(tmp_path / "x.db", "a", "b")
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
    store = await _open_with_agents(tmp_path / "x.db", "a")
    await store.close()
    with pytest.raises(StoreError):
        await store.append("a", "user", {"content": "too late"})


async def test_a_written_event_survives_reopening(tmp_path):
    path = tmp_path / "x.db"
    store = await _open_with_agents(path, "a")
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
