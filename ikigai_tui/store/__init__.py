"""The store adapters: the event log and its small state on a database engine.

`open_store(target)` opens the one a `--db` names: a `postgresql://` (or `postgres://`)
URL is PostgreSQL (store/postgres, its driver imported only then); anything else is a
SQLite file (store/sqlite)."""

from __future__ import annotations

import os
from typing import Any

from ikigai_tui.support.urls import is_url


async def open_store(target: str | os.PathLike, *, create: bool = True,
                     readonly: bool = False) -> Any:
    """The store at `target` (a Persistence, core/ports.py): StoreError when it cannot be
    opened, in one line that never holds the URL's password."""
    if is_url(target):
        from ikigai_tui.store.postgres.store import PgStore

        return await PgStore.open(str(target), create=create, readonly=readonly)
    from ikigai_tui.store.sqlite.store import Store

    return await Store.open(target, create=create, readonly=readonly)
