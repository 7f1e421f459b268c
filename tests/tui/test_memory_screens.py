"""The memory tool in the TUI, driven by keys (Pilot): with `memory_writes = "ask"` each
change the LLM proposes in a real turn (the fake provider behind real litellm) opens the
diff dialog, and only an accepted one is written; `/memory` lists the files with their
sizes and Enter shows one."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from ikigai_tui.runtime import open_session
from ikigai_tui.runtime import create_app
from ikigai_tui.tui.screens.memory import MemoryFileScreen, MemoryScreen
from ikigai_tui.tui.screens.memory_diff import MemoryDiffScreen
from tests.fakes.server import FakeProvider, Reply

from .conftest import DB_LABEL, SIZE, idle, make_config, settle, type_text


@pytest.fixture
def fake():
    with FakeProvider() as running:
        yield running


def app_on(bench, tmp_path, fake=None, **memory):
    config = make_config(bench.db, tmp_path)
    config = dataclasses.replace(config, memories_dir=tmp_path / "mem", **memory)
    if fake is not None:
        config = dataclasses.replace(config, model="openai/x", api_base=fake.openai_base)
    return create_app(config, db_label=DB_LABEL,
                      session_factory=lambda c: open_session(c, new_id=bench.new_id))


async def _wait_for(pilot, condition, what: str, timeout: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        assert loop.time() < deadline, f"timed out waiting for {what}"
        await pilot.pause(0.02)


def _diff_shown(app) -> bool:
    return isinstance(app.screen, MemoryDiffScreen) and bool(app.screen.query("#memory-diff-text"))


def create(path: str, text: str) -> Reply:
    return Reply(tool_calls=[("memory", {"command": "create", "path": path, "file_text": text})])


async def test_ask_mode_shows_each_change_and_writes_only_the_accepted(bench, tmp_path, fake,
                                                                       monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    fake.queue(create("/memories/yes.md", "keep me\n"), create("/memories/no.md", "drop me\n"),
               Reply(text="Done."))
    app = app_on(bench, tmp_path, fake, memory_writes="ask")
    folder = tmp_path / "mem"
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await type_text(pilot, "Remember two things.")
        await pilot.press("enter")
        # The first request imports litellm: slow on a busy machine.
        await _wait_for(pilot, lambda: _diff_shown(app), "the first diff", timeout=90)
        screen = app.screen
        assert screen.proposal.change.path == "/memories/yes.md"
        shown = str(screen.query_one("#memory-diff-text").render())
        assert "+keep me" in shown
        assert not (folder / "yes.md").exists()  # nothing before the answer
        await pilot.press("y")
        await _wait_for(pilot, lambda: _diff_shown(app) and app.screen is not screen,
                        "the second diff")
        assert (folder / "yes.md").read_text() == "keep me\n"
        await pilot.press("n")
        await _wait_for(pilot, lambda: not app.session.running(), "the turn's end")
        await idle(pilot)
        assert not (folder / "no.md").exists()
        root = app.focused_agent
        results = [e.payload["content"] for e in await app.session.store.events(root)
                   if e.kind == "tool_result"]
        assert results == ["File created successfully at: /memories/yes.md",
                           "Error: the user refused this memory change; nothing was written"]


async def test_memory_lists_the_files_and_enter_views_one(bench, tmp_path):
    folder = tmp_path / "mem"
    (folder / "notes").mkdir(parents=True)
    (folder / "notes" / "project.md").write_text("Goal: ship the memory tool.\nDeadline: Friday.\n")
    (folder / "user.md").write_text("Prefers tabs.\n")
    app = app_on(bench, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await type_text(pilot, "/memory")
        await pilot.press("enter")
        await idle(pilot)
        screen = app.screen
        assert isinstance(screen, MemoryScreen)
        assert screen.files == [("/memories/notes/project.md", 46), ("/memories/user.md", 14)]
        await pilot.press("enter")  # the first file
        await idle(pilot)
        assert isinstance(app.screen, MemoryFileScreen)
        assert app.screen.text.startswith("Goal: ship the memory tool.")
        await pilot.press("escape")
        await idle(pilot)
        assert app.screen is screen
        await pilot.press("escape")
        await idle(pilot)
        assert not isinstance(app.screen, MemoryScreen)
