"""The backends the contract suite runs against (today only SQLite). A new backend adds
a Backend here; every test in tests/contract then runs against it too."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from ikigai_tui.store.sqlite.store import Store

APPENDER = Path(__file__).parent.parent / "integration" / "scripts" / "appender.py"


@dataclass
class Backend:
    name: str
    root: Path

    async def open(self, db: str = "log", readonly: bool = False):
        """A new connection to the database called `db` (created on first use)."""
        return await Store.open(self.root / f"{db}.db", readonly=readonly)

    def appender(self, db: str, *args: str) -> list[str]:
        """The command line of another process that writes to the database `db`."""
        return [sys.executable, str(APPENDER), *args[:1], str(self.root / f"{db}.db"), *args[1:]]


@pytest.fixture(params=["sqlite"])
def backend(request, tmp_path) -> Backend:
    return Backend(request.param, tmp_path)
