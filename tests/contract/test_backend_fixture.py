"""The contract suite's backends (conftest.py): each name a test opens is one database of
its own, the same one every time it is named, also for another process's command line."""

from __future__ import annotations

import asyncpg

from tests.contract.conftest import APPENDER, Backend


def test_sqlite_names_files_in_the_test_folder(tmp_path):
    backend = Backend("sqlite", tmp_path)
    assert backend.target("log") == str(tmp_path / "log.db")
    assert backend.appender("log", "batches", "T", "--agent", "a")[1:] == [
        str(APPENDER), "batches", str(tmp_path / "log.db"), "T", "--agent", "a"]


async def test_postgres_gives_each_name_its_own_database_on_the_server(pg_server, tmp_path):
    backend = Backend("postgres", tmp_path, pg_server)
    log = backend.target("log")
    other = backend.target("other")
    assert backend.target("log") == log and other != log
    assert log.startswith(f"postgresql://postgres@127.0.0.1:{pg_server.port}/")
    assert backend.appender("log", "batches", "T")[2:] == ["batches", log, "T"]
    first = await asyncpg.connect(log)
    second = await asyncpg.connect(other)
    try:
        await first.execute("CREATE TABLE only_in_log (n int)")
        assert await second.fetchval("SELECT to_regclass('only_in_log')") is None
        again = await asyncpg.connect(backend.target("log"))
        assert await again.fetchval("SELECT to_regclass('only_in_log')") is not None
        await again.close()
    finally:
        await first.close()
        await second.close()
    for url in backend.urls.values():
        pg_server.drop_database(url)
