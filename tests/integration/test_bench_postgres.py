"""benchmarks/postgres.py, issue 26's figures of PostgreSQL against SQLite: the p99 it
reports, the app's config on a database URL, and the cached cluster that spares each run
writing the 100,000-event log again."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))

import postgres  # noqa: E402
import tui_drive  # noqa: E402

from ikigai_tui.core.events import AgentRecord, WriteBatch  # noqa: E402
from ikigai_tui.store import open_store  # noqa: E402
from tests.pg_server import PgServer  # noqa: E402


def test_p99_is_by_nearest_rank():
    assert postgres.nearest_rank(list(range(1, 201)), 0.99) == 198
    assert postgres.nearest_rank([5.0, 1.0, 3.0], 0.5) == 3.0


def test_the_app_on_a_database_url_reads_no_config_file():
    config = tui_drive.make_config("postgresql://postgres@127.0.0.1:5432/bench")
    assert config.db == "postgresql://postgres@127.0.0.1:5432/bench"
    assert config.config_path == Path(os.devnull)


async def small_log(path: Path, count: int) -> None:
    store = await open_store(path)
    batch = WriteBatch()
    batch.new_agents.append(AgentRecord("a" * 32, None, "root", "offline", "idle",
                                        time.time(), None, 1000))
    for n in range(count):
        batch.add("a" * 32, "user", {"content": f"message {n}"})
    await store.write(batch)
    await store.close()


async def count_events(url: str) -> int:
    store = await open_store(url, create=False)
    try:
        return await store.count_events()
    finally:
        await store.close()


def test_the_written_cluster_is_cached_without_spent_wal_and_copied_next_time(
        tmp_path, monkeypatch):
    monkeypatch.setattr(postgres.gen, "DATA", tmp_path / "data")
    (tmp_path / "data").mkdir()
    cache_key = tmp_path / "tui-50.db"
    asyncio.run(small_log(cache_key, 50))
    write = postgres.load

    async def write_and_switch_wal(sqlite_path: Path, url: str) -> float:
        """The log, and WAL segments the cluster no longer needs once stopped."""
        seconds = await write(sqlite_path, url)
        for n in range(3):
            server.sql(f"CREATE TABLE spent_{n} (); SELECT pg_switch_wal()", "bench")
        return seconds

    monkeypatch.setattr(postgres, "load", write_and_switch_wal)
    made = []
    for _ in range(2):
        server = PgServer(settings=())
        try:
            url, how = postgres.ready_cluster(server, cache_key, cache_key)
            made.append(how)
            assert asyncio.run(count_events(url)) == 50
            assert server.sql("SHOW fsync").strip() == "on"
        finally:
            server.close()
    assert made[0].startswith("the PostgreSQL log written in") and made[0].endswith("cached")
    assert made[1].startswith("the PostgreSQL cluster copied from pg-tui-50-p")
    (cache,) = (tmp_path / "data").glob("pg-tui-50-p*")
    segments = [p for p in (cache / "pg_wal").iterdir() if len(p.name) == 24]
    assert len(segments) == 1
