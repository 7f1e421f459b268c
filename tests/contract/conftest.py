"""The backends the contract suite runs against: SQLite and PostgreSQL. Every test in
tests/contract runs against each; a new backend adds a param here.

A test names its databases (`backend.open("log")`); each distinct name is its own
database, created on first use: a SQLite file in the test's folder, or a fresh database
on this worker's PostgreSQL server (the `pg_server` fixture, started only when a
PostgreSQL test runs), dropped after the test. Both are opened through `open_store`, as
the program opens a `--db`."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ikigai_tui.store import open_store

APPENDER = Path(__file__).parent.parent / "integration" / "scripts" / "appender.py"


@dataclass
class Backend:
    name: str
    root: Path
    server: object | None = None  # tests.pg_server.PgServer, for "postgres"
    urls: dict[str, str] = field(default_factory=dict)

    def target(self, db: str = "log") -> str:
        """What a --db names for the database called `db`: a file's path, or a URL."""
        if self.server is None:
            return str(self.root / f"{db}.db")
        if db not in self.urls:
            self.urls[db] = self.server.create_database()
        return self.urls[db]

    async def open(self, db: str = "log", *, readonly: bool = False):
        """A new connection to the database called `db` (created on first use)."""
        return await open_store(self.target(db), readonly=readonly)

    def appender(self, db: str, *args: str) -> list[str]:
        """The command line of another process that writes to the database `db`."""
        return [sys.executable, str(APPENDER), *args[:1], self.target(db), *args[1:]]


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request, tmp_path):
    if request.param == "sqlite":
        yield Backend("sqlite", tmp_path)
        return
    server = request.getfixturevalue("pg_server")
    server.start()  # a test before may have stopped it
    made = Backend("postgres", tmp_path, server)
    yield made
    if server.running:
        for url in made.urls.values():
            server.drop_database(url)
