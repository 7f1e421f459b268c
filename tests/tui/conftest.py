"""Fixtures for the full-app TUI tests: apps built on prepared databases, and the place
the snapshot SVGs live (``snapshots/test_snapshots/`` at the project root, not ``__snapshots__``).

Everything that could differ between runs is pinned: agent ids come from a counter, the
database label is fixed, the model is the deterministic offline one, the budget comes
from the config, and the input's cursor does not blink.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from pytest_textual_snapshot import SVGImageExtension
from syrupy.assertion import SnapshotAssertion

from ikigai_tui import config as config_module
from ikigai_tui.config import Config
from ikigai_tui.core.provider import Limits
from ikigai_tui.core.session import Session, SessionSettings
from ikigai_tui.store.sqlite.store import Store
from ikigai_tui.llm.providers import Providers
from ikigai_tui.runtime import open_session
from ikigai_tui.runtime import create_app
from ikigai_tui.tui.app import IkigaiApp

SIZE = (120, 40)
SNAPSHOT_DIR = Path(__file__).resolve().parents[2] / "snapshots"
DB_LABEL = "ikigai.db"
DEFAULT_BUDGET = 100_000


# ---- snapshots in <root>/snapshots/ -------------------------------------------------


class ProjectSVGExtension(SVGImageExtension):
    """pytest-textual-snapshot's SVG extension, writing to the project's snapshots/ folder."""

    @classmethod
    def dirname(cls, *, test_location) -> str:
        # snapshots/<test module>/: syrupy relates a snapshot to its test by that folder
        # name (it warns otherwise, and could not tell which snapshots are unused).
        return str(SNAPSHOT_DIR / test_location.basename)


class ProjectSnapshot(SnapshotAssertion):
    """`snap_compare` asks for SVGImageExtension; hand it the project's subclass instead."""

    def use_extension(self, extension_class=None):
        if extension_class is SVGImageExtension:
            extension_class = ProjectSVGExtension
        return super().use_extension(extension_class)


@pytest.fixture
def snapshot(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return ProjectSnapshot(
        update_snapshots=snapshot.update_snapshots,
        extension_class=snapshot.extension_class,
        test_location=snapshot.test_location,
        session=snapshot.session,
    )


# ---- ids, config, prepared databases --------------------------------------------------


def id_counter() -> Callable[[], str]:
    """a1b2c1000..., a1b2c2000...: 32 hex characters, distinct in the first six."""
    numbers = itertools.count(1)
    return lambda: f"{0xA1B2C0 + next(numbers):06x}".ljust(32, "0")


def counted_session(new_id: Callable[[], str]) -> type[Session]:
    """A Session whose agent ids come from `new_id`, the root's included (the root is made
    inside `Session.open`, before `create_app`'s `new_id` can be set on the session)."""

    class CountedSession(Session):
        def new_id(self) -> str:
            return new_id()

    return CountedSession


def make_config(db: Path, tmp_path: Path, *, budget: int = DEFAULT_BUDGET,
                delay: float = 0.0, config_path: Path | None = None) -> Config:
    env = {"IKIGAI_SLIDING_CONTEXT_TOKENS": str(budget), "IKIGAI_OFFLINE_DELAY": str(delay)}
    config_path = config_path or tmp_path / "no-config.toml"
    return config_module.load(db=str(db), config_path=str(config_path), env=env)


@contextlib.asynccontextmanager
async def open_prep(db: Path, new_id: Callable[[], str], *,
                    budget: int = DEFAULT_BUDGET) -> AsyncIterator[Session]:
    """A session on the db file, to write a state before the app starts; waits for every
    turn and closes on exit."""
    store = await Store.open(db)
    session = await counted_session(new_id).open(store, Providers(), SessionSettings(budget=budget))
    try:
        yield session
        await session.wait_idle()
    finally:
        await session.close()
        await store.close()


async def say(session: Session, agent_id: str, text: str) -> None:
    task = await session.say(agent_id, text)
    await task
    await session.wait_idle()


def root_id(session: Session) -> str:
    root = session.tree.root
    assert root is not None
    return root.id


def agent_named(session: Session, name: str) -> str:
    found = [a.id for a in session.tree if a.name == name]
    assert len(found) == 1, f"no single agent named {name!r}"
    return found[0]


class Workbench:
    """Prepares a database, then builds the app on it with the same id counter."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.db = tmp_path / "ikigai.db"
        self.new_id = id_counter()
        self.budget = DEFAULT_BUDGET
        self.config_path: Path | None = None  # the config file: default tmp/no-config.toml

    def prep(self, budget: int | None = None):
        if budget is not None:
            self.budget = budget
        return open_prep(self.db, self.new_id, budget=self.budget)

    def prepare(self, steps: Callable[[Session], Awaitable[None]], *,
                budget: int | None = None) -> None:
        """For the (synchronous) snapshot tests: run `steps` on a session, in a loop of its own."""

        async def main() -> None:
            async with self.prep(budget) as session:
                await steps(session)

        asyncio.run(main())

    def app(self, *, budget: int | None = None, delay: float = 0.0) -> IkigaiApp:
        if budget is not None:
            self.budget = budget
        config = make_config(self.db, self.tmp_path, budget=self.budget, delay=delay,
                             config_path=self.config_path)
        return create_app(config, db_label=DB_LABEL,
                          session_factory=lambda config: open_session(config, new_id=self.new_id))


async def talked_app(bench: Workbench, text: str = "Parent talk.", **options) -> IkigaiApp:
    """The app on a database where the root was told `text` (and answered)."""
    async with bench.prep() as session:
        await say(session, root_id(session), text)
    return bench.app(**options)


@pytest.fixture
def bench(tmp_path) -> Workbench:
    return Workbench(tmp_path)


# ---- waiting for the app ---------------------------------------------------------------


async def settle(pilot, *, timeout: float = 5.0) -> None:
    """Wait until the session is open, the scrollback loaded and the gauge measured;
    stop the cursor blinking and focus the input."""
    app: IkigaiApp = pilot.app
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while app.session is None or app.focused_agent is None or app.panes.active is None:
        assert loop.time() < deadline, "the app did not open its session"
        await pilot.pause(0.02)
    app.prompt_input.cursor_blink = False
    await app.session.wait_idle()
    await idle(pilot)
    app.prompt_input.focus()
    await idle(pilot)


async def idle(pilot, *, timeout: float = 5.0) -> None:
    """Let pending notices, the coalesced refresh (30 ms timer) and workers run out."""
    app: IkigaiApp = pilot.app
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    for _ in range(3):
        await pilot.pause(0.05)
        while app._refresh_pending or (app.session is not None and app.session.running()):
            assert loop.time() < deadline, "the app did not settle"
            await pilot.pause(0.05)
        await app.workers.wait_for_complete()
    await pilot.pause()


def set_limit(app: IkigaiApp, limit: int) -> None:
    """Make every model's input limit `limit` tokens (no reply reserve)."""
    assert app.session is not None
    app.session.providers.limits = lambda model: Limits(input=limit, reserve=0, known=True)  # type: ignore[method-assign]
    app.schedule_refresh()


async def type_text(pilot, text: str) -> None:
    """Type into the focused widget key by key (as a user would)."""
    keys = []
    for ch in text:
        keys.append({" ": "space"}.get(ch, ch))
    await pilot.press(*keys)


async def send_text(pilot, text: str) -> None:
    """Type a line into the input, press Enter, and let what it started run out."""
    await type_text(pilot, text)
    await pilot.press("enter")
    await idle(pilot)


def screen_lines(scrollback) -> list[str]:
    """The scrollback's lines in view, as plain text."""
    return [scrollback.render_line(y).text for y in range(scrollback.size.height)]


def all_lines(scrollback) -> list[str]:
    """Every line the scrollback holds rendered (the loaded range), as plain text."""
    return [strip.text for strip in scrollback._lines]


async def events_of(app, agent_id: str, kind: str | None = None) -> list:
    """The agent's events in the app's log, of one kind when given."""
    events = await app.session.store.events(agent_id)
    return [e for e in events if kind is None or e.kind == kind]


async def conversation(session, *texts: str) -> None:
    """Say each text to the root, in turn (each answered before the next)."""
    for text in texts:
        await say(session, root_id(session), text)
