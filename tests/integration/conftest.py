"""Fixtures shared by the integration tests. For the provider tests: `fmt` (each wire
format in turn, with its API key set), `fake` (the loopback fake provider), `make` (open
Harnesses over fresh databases, closed at the end) and `h` (one such Harness); see
provider_helpers.py. For the agent tests: `slow_session`, whose offline model streams
slowly. The helper modules' asserts are rewritten by pytest, as a test module's are.
"""

from __future__ import annotations

import pytest

from ikigai_tui.core.session import Session, SessionSettings
from ikigai_tui.store.sqlite.store import Store
from ikigai_tui.llm.providers import Providers
from tests.fakes.server import FakeProvider

# Before the helper modules are first imported: their asserts then report like a test's own.
pytest.register_assert_rewrite("tests.integration.provider_helpers",
                               "tests.integration.session_helpers")

from tests.integration.provider_helpers import (  # noqa: E402
    FORMATS, KEY_VARIABLES, MODELS, SECRET, Harness, base_for, close,
)


@pytest.fixture(params=FORMATS)
def fmt(request, monkeypatch) -> str:
    for variable in KEY_VARIABLES.values():
        monkeypatch.setenv(variable, SECRET)
    return request.param


@pytest.fixture
async def fake():
    async with FakeProvider() as running:
        yield running


@pytest.fixture
async def make(tmp_path, fake, fmt):
    """make(**providers_options) -> an open Harness over a fresh database; closed at the end."""
    opened: list[Harness] = []

    async def _make(*, path=None, model: str | None = None, settings_of_session: dict | None = None,
                    **options) -> Harness:
        settings = dict(api_base=base_for(fake, fmt), timeout=2, max_retries=3,
                        retry_base_delay=0.01)
        settings.update(options)
        path = path or tmp_path / "x.db"
        store = await Store.open(path)
        session = await Session.open(store, Providers(**settings),
                                     SessionSettings(model=model or MODELS[fmt],
                                                     **(settings_of_session or {})))
        h = Harness(fmt, fake, store, session, path)
        session.listeners.append(h.notices.append)
        opened.append(h)
        return h

    yield _make
    for h in reversed(opened):
        await close(h)


@pytest.fixture
async def h(make) -> Harness:
    return await make()


@pytest.fixture
async def slow_session(tmp_path):
    """A session whose offline model streams one word every 10 ms."""
    store = await Store.open(tmp_path / "slow.db")
    sess = await Session.open(store, Providers(offline_delay=0.01), SessionSettings())
    yield sess
    await sess.close()
    await store.close()


@pytest.fixture(params=["sqlite", "postgres"])
def database(request, tmp_path):
    """database(name) -> where a test's log lives, on each engine in turn: a SQLite file in
    tmp_path, or a fresh database on the worker's PostgreSQL server (tests/pg_server.py).
    The context-semantics tests take it, so they hold on both engines."""
    made: list[str] = []

    def where(name: str):
        if request.param == "sqlite":
            return tmp_path / f"{name}.db"
        server = request.getfixturevalue("pg_server")
        server.start()  # a test before may have stopped it (the fault tests)
        made.append(server.create_database())
        return made[-1]

    yield where
    if made:
        server = request.getfixturevalue("pg_server")
        for url in made:
            if server.running:
                server.drop_database(url)
