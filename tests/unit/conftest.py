"""Fixtures for the unit tests that need more than the shared ones in tests/conftest.py."""

from __future__ import annotations

import pytest

from ikigai_tui.core.session import Session, SessionSettings
from ikigai_tui.core.tokens.limits import DEFAULT_BUDGET
from ikigai_tui.store.sqlite.store import Store
from ikigai_tui.llm.providers import Providers


@pytest.fixture
async def sessions(db_path):
    """open(budget=...) -> a Session on db_path; close(session) ends it (all end at teardown)."""
    opened: dict[int, tuple[Session, Store]] = {}

    async def open_(budget: int = DEFAULT_BUDGET) -> Session:
        store = await Store.open(db_path)
        session = await Session.open(store, Providers(), SessionSettings(budget=budget))
        opened[id(session)] = (session, store)
        return session

    async def close(session: Session) -> None:
        session_, store = opened.pop(id(session))
        await session_.close()
        await store.close()

    open_.close = close
    yield open_
    for session, store in opened.values():
        await session.close()
        await store.close()
