"""Shared fixtures. Tests never read the developer's config or data, nor touch the network."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ikigai_tui.core.tokens import encoders
from ikigai_tui.core.tokens.encoders import LocalEncoder
from ikigai_tui.core.matching import embedder as embedders
from ikigai_tui.core.session import Session, SessionSettings
from ikigai_tui.store.sqlite.store import Store
from ikigai_tui.embed import default_embedder
from ikigai_tui.llm.providers import Providers

# Read by Textual at import: unset before any test imports it (see STACK.md).
for _name in ("NO_COLOR", "TEXTUAL_THEME"):
    os.environ.pop(_name, None)

# A session the tests open themselves (not through runtime.open_session) matches with the
# program's embedder, as one the runtime opens does.
embedders.use(default_embedder)

_PROVIDER_KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory, monkeypatch):
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    for name in list(os.environ):
        if name.startswith("IKIGAI_") or name in _PROVIDER_KEYS:
            monkeypatch.delenv(name, raising=False)
    yield
    # An app run in this process installs worker-process encoders (tui/startup.py): the
    # next test counts here again, as a fresh process would (its workers end now).
    if encoders.factory() is not LocalEncoder:
        encoders.use(LocalEncoder)


@pytest.fixture
def db_path(tmp_path) -> Path:
    return tmp_path / "ikigai.db"


@pytest.fixture
async def session(db_path):
    """A session over a fresh database, with the root agent, on the offline model."""
    store = await Store.open(db_path)
    sess = await Session.open(store, Providers(), SessionSettings())
    yield sess
    await sess.close()
    await store.close()


@pytest.fixture(scope="session")
def pg_server():
    """This worker's PostgreSQL server (tests/pg_server.py), started at the first test that
    asks for it, stopped and deleted at the end of the run. It never skips: a server that
    cannot start fails the tests that need it, with its log's tail."""
    from tests.pg_server import PgServer

    server = PgServer()
    try:
        server.start()
        yield server
    finally:
        server.close()


@pytest.fixture
def pg_url(pg_server) -> Iterator[str]:
    """The URL of a fresh database of its own on the worker's server (dropped after)."""
    pg_server.start()  # a test before may have stopped it (the fault tests)
    url = pg_server.create_database()
    yield url
    if pg_server.running:
        pg_server.drop_database(url)


def run_ikigai(*args: str, input: str | None = None, env: dict | None = None,
               timeout: float = 60) -> subprocess.CompletedProcess:
    """The real `ikigai` command line in a fresh interpreter."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    return subprocess.run(
        [sys.executable, "-m", "ikigai_tui", *args], input=input, capture_output=True,
        text=True, env=full_env, timeout=timeout,
    )


@pytest.fixture
def ikigai():
    return run_ikigai


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config):
    """`-n auto`: two workers per core (tests/scheduling.py says why)."""
    from tests import scheduling

    return scheduling.auto_workers(scheduling.cores(), os.environ)


def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist, the slowest files first (every worker sorts alike)."""
    from tests import scheduling

    if os.environ.get("PYTEST_XDIST_WORKER"):
        items[:] = scheduling.slowest_files_first(items, scheduling.file_seconds())
