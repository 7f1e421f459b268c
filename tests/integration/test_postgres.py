"""The log on PostgreSQL beyond the contract suite (issue 26): a feed that misses nothing
when two writers' commits interleave, a batch sent again written once, a server restarted
mid-session losing nothing acknowledged, a newer schema refused, bad URLs as one line
with no password, and another process's events on screen-side within the latency goal.
Against the throwaway server the suite starts (tests/pg_server.py)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time

import pytest

from ikigai_tui.core.events import AgentRecord, WriteBatch
from ikigai_tui.core.ports import StoreError
from ikigai_tui.store import open_store


def agent(agent_id: str) -> AgentRecord:
    return AgentRecord(agent_id, None, None, "offline", "idle", 0.0, None, None)


async def with_agents(url: str, *ids: str):
    store = await open_store(url)
    batch = WriteBatch()
    for agent_id in ids:
        batch.new_agents.append(agent(agent_id))
    await store.write(batch)
    return store


def message(agent_id: str, text: str) -> WriteBatch:
    batch = WriteBatch()
    batch.add(agent_id, "user", {"content": text})
    return batch


async def test_interleaved_writers_never_make_the_feed_miss_an_event(pg_url):
    """Writer A holds its transaction open after numbering its events while B commits;
    a reader following the feed gets every event once, in id order, with no gap."""
    a = await with_agents(pg_url, "a", "b")
    b = await open_store(pg_url)
    reader = await open_store(pg_url)
    seen: list[int] = []
    reader.add_commit_hook(lambda events, agents, updates: seen.extend(e.id for e in events))
    await reader.start_feed(interval=0.05)
    slow = a._committed

    async def slow_committed(con, batches):  # inside A's transaction, ids being assigned
        found = await slow(con, batches)
        await asyncio.sleep(0.05)
        return found

    a._committed = slow_committed
    try:
        writes = []
        for n in range(20):
            writes.append(a.write(message("a", f"a{n}")))
            writes.append(b.write(message("b", f"b{n}")))
        done = await asyncio.gather(*writes)
        last = max(e.id for events in done for e in events)
        deadline = time.monotonic() + 5
        while (not seen or seen[-1] < last) and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
            await reader.catch_up()
        assert seen == sorted(set(seen)), "delivered twice or out of order"
        assert seen == list(range(seen[0], last + 1)), "a gap: an event was missed"
        assert len(seen) == 40
    finally:
        for store in (a, b, reader):
            await store.close()


async def test_a_batch_sent_again_is_written_once(pg_url):
    store = await with_agents(pg_url, "a")
    try:
        batch = message("a", "only once")
        first = await store.write(batch)
        again = await store._commit([batch])  # its acknowledgement lost: sent again
        assert [e.id for e in again[0]] == [e.id for e in first]
        assert [e.payload["content"] for e in await store.events("a")] == ["only once"]
    finally:
        await store.close()


async def test_a_restarted_server_loses_nothing_acknowledged(pg_url, pg_server):
    store = await with_agents(pg_url, "a")
    told: list = []
    store.on_trouble = told.append
    try:
        acknowledged = [e.id for e in await store.write(message("a", "before"))]
        pg_server.stop()
        restart = asyncio.get_running_loop().run_in_executor(None, _start_later, pg_server)
        after = await store.write(message("a", "during the restart"))  # retried, then written
        await restart
        acknowledged += [e.id for e in after]
        texts = [e.payload["content"] for e in await store.events("a")]
        assert texts == ["before", "during the restart"]
        assert [e.id for e in await store.events("a")] == acknowledged
        assert told and "lost the connection" in told[0] and told[-1] is None
    finally:
        await store.close()


def _start_later(server) -> None:
    time.sleep(0.5)
    server.start()


async def test_a_newer_schema_is_refused_and_left_unchanged(pg_url):
    store = await with_agents(pg_url, "a")
    await store._execute("UPDATE ikigai_meta SET value = '99' WHERE key = 'schema_version'")
    await store.close()
    with pytest.raises(StoreError, match="newer ikigai"):
        await open_store(pg_url)
    import asyncpg

    con = await asyncpg.connect(pg_url.split("?")[0], server_settings={"search_path": "ikigai"})
    try:
        assert await con.fetchval("SELECT value FROM ikigai_meta") == "99"
    finally:
        await con.close()


def _ikigai(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("IKIGAI_")}
    return subprocess.run([sys.executable, "-m", "ikigai_tui", *args], capture_output=True,
                          text=True, timeout=60, env=env)


def test_an_unreachable_server_or_a_missing_database_is_one_line(pg_url):
    with socket_closed() as port:
        done = _ikigai("--db", f"postgresql://me:s3cret-pw@127.0.0.1:{port}/x", "-p", "hi")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("Error: ")
    assert "cannot reach" in done.stderr and "s3cret-pw" not in done.stderr
    base = pg_url.rsplit("/", 1)[0]
    missing = _ikigai("--db", f"{base.replace('postgres@', 'postgres:s3cret-pw@')}/no_such_db", "-p", "hi")
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1
    assert "no such database" in missing.stderr and "s3cret-pw" not in missing.stderr
    assert "***" in missing.stderr


class socket_closed:
    """A loopback port nothing listens on."""

    def __enter__(self) -> int:
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            return s.getsockname()[1]

    def __exit__(self, *exc) -> None:
        return None


async def test_another_writers_appends_reach_the_session_within_the_latency_goal(pg_url):
    from ikigai_tui.core.session import Session, SessionSettings
    from ikigai_tui.llm.providers import Providers

    store = await open_store(pg_url)
    session = await Session.open(store, Providers(), SessionSettings())
    arrived: dict[str, float] = {}
    session.subscribe(lambda n: [arrived.setdefault(e.payload.get("content", ""), time.monotonic())
                                 for e in getattr(n, "events", ()) if e.kind == "user"])
    try:
        root = session.tree.root.id
        latencies = []
        for n in range(5):
            text = f"from elsewhere {n}"
            other = await open_store(pg_url)  # another writer: its own connections
            try:
                sent = time.monotonic()
                await other.write(message(root, text))
            finally:
                await other.close()
            deadline = sent + 2
            while text not in arrived and time.monotonic() < deadline:
                await asyncio.sleep(0.005)
            assert text in arrived, "never arrived"
            latencies.append(arrived[text] - sent)
        latencies.sort()
        assert latencies[len(latencies) // 2] <= 0.25, latencies
    finally:
        await session.close()
        await store.close()


async def test_a_role_that_owns_only_its_schema_is_enough(pg_url, pg_server):
    """The README's least-privilege set-up: a login role, a schema it owns, nothing else
    (no CREATE on the database, nothing in public)."""
    database = pg_url.rsplit("/", 1)[1]
    role = f"ikigai_{database}"
    for statement in (f"CREATE ROLE {role} LOGIN PASSWORD 'pw'",
                      f"REVOKE ALL ON DATABASE {database} FROM PUBLIC",
                      f"GRANT CONNECT ON DATABASE {database} TO {role}",
                      f"CREATE SCHEMA {role} AUTHORIZATION {role}",
                      "REVOKE ALL ON SCHEMA public FROM PUBLIC"):
        pg_server.sql(statement, database)
    try:
        own = pg_url.replace("postgres@", f"{role}:pw@") + f"?schema={role}"
        store = await with_agents(own, "a")
        try:
            await store.write(message("a", "kept in my own schema"))
            assert [e.payload["content"] for e in await store.search('"schema"', ["a"])] == [
                "kept in my own schema"]
            assert await store.acquire_lease("a", os.getpid(), "here") is None
            await store.start_feed()
        finally:
            await store.close()
        elsewhere = pg_url.replace("postgres@", f"{role}:pw@") + "?schema=not_mine"
        with pytest.raises(StoreError) as refused:
            await open_store(elsewhere)
        assert "permission denied" in str(refused.value) and "pw@" not in str(refused.value)
        assert "\n" not in str(refused.value)
    finally:
        pg_server.sql(f"DROP SCHEMA IF EXISTS {role} CASCADE", database)
        pg_server.sql(f"DROP OWNED BY {role}", database)
        pg_server.sql(f"DROP ROLE IF EXISTS {role}")


def test_the_password_is_in_no_output_log_or_row(pg_url, tmp_path):
    secret = "pw-not-to-be-seen-42"
    url = pg_url.replace("postgres@", f"postgres:{secret}@")  # trust: any password passes
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"),
           "XDG_DATA_HOME": str(tmp_path / "data"), "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    outputs = []
    for args in (["--debug", "-p", "hello"], ["paths"], ["log", "--json"], ["context", "--json"],
                 ["export"], ["check"]):
        done = subprocess.run([sys.executable, "-m", "ikigai_tui", "--db", url, *args],
                              capture_output=True, text=True, timeout=60, env=env)
        assert done.returncode == 0, (args, done.stderr)
        outputs.append(done.stdout + done.stderr)
    assert all(secret not in text for text in outputs)
    assert any("postgres:***@" in text for text in outputs)  # paths shows the URL, masked
    logs = [p.read_text(errors="replace") for p in (tmp_path / "state").rglob("*") if p.is_file()]
    assert logs and all(secret not in text for text in logs)
    # Nor in the log's rows (read in a child: this test is not a coroutine).
    dump = subprocess.run([sys.executable, "-c", (
        "import asyncio, asyncpg, sys\n"
        "async def main():\n"
        "    c = await asyncpg.connect(sys.argv[1], server_settings={'search_path': 'ikigai'})\n"
        "    rows = await c.fetch(\"SELECT payload FROM events UNION ALL SELECT value FROM ikigai_meta\")\n"
        "    print('\\n'.join(r[0] for r in rows))\n"
        "    await c.close()\n"
        "asyncio.run(main())\n"), pg_url], capture_output=True, text=True, timeout=60)
    assert dump.returncode == 0 and dump.stdout and secret not in dump.stdout


async def test_a_server_restarted_mid_turn_loses_nothing_acknowledged(pg_url, pg_server):
    """A turn streaming on the offline model (slowly) while the server stops and starts:
    the turn ends, its reply is committed once, and everything committed before is kept."""
    from ikigai_tui.core.session import Session, SessionSettings
    from ikigai_tui.llm.providers import Providers

    store = await open_store(pg_url)
    session = await Session.open(store, Providers(0.02), SessionSettings())
    try:
        root = session.tree.root.id
        await (await session.say(root, "a first question"))
        before = [(e.id, e.kind, e.payload) for e in await store.events(root)]
        turn = await session.say(root, "a second question, answered while the server restarts")
        await asyncio.sleep(0.1)  # the reply is streaming
        await asyncio.to_thread(pg_server.stop)
        await asyncio.to_thread(_start_later, pg_server)
        assert await asyncio.wait_for(turn, 60)
        after = [(e.id, e.kind, e.payload) for e in await store.events(root)]
        assert after[:len(before)] == before  # nothing committed was lost or changed
        kinds = [k for _, k, _ in after[len(before):]]
        assert kinds.count("user") == 1 and kinds.count("assistant") == 1, kinds
        reply = next(p for _, k, p in after[len(before):] if k == "assistant")
        assert "a second question" in reply["content"] and not reply.get("interrupted")
        ids = [i for i, _, _ in after]
        assert ids == sorted(set(ids))
    finally:
        await session.close()
        await store.close()
