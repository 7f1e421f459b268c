"""Snapshots of the memory screens (SVGs in <root>/snapshots/test_memory_snapshots/):
/memory's list of files with their sizes, one file shown, and the diff of a change the
LLM proposes under memory_writes = "ask". Update with `--snapshot-update` and look at
every changed SVG before committing it."""

from __future__ import annotations

from ikigai_tui.core.memory.commands import plan
from ikigai_tui.core.memory.proposal import MemoryProposal
from ikigai_tui.core.memory.service import memory_of
from ikigai_tui.tui.screens.memory_diff import MemoryDiffScreen

from .conftest import SIZE, idle, settle, type_text
from .test_memory_screens import app_on

FILES = {
    "user.md": "Prefers tabs over spaces.\nWrites Python and some Rust.\nTimezone: Europe/Lisbon.\n",
    "notes/project.md": "# Project\nGoal: ship the memory tool.\nDeadline: Friday.\n",
    "notes/decisions.md": "- SQLite, not Postgres: one file, no server.\n- Pins stay in the system prompt.\n",
}


def _write(folder) -> None:
    for rel, text in FILES.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_memory_view(bench, tmp_path, snap_compare):
    _write(tmp_path / "mem")
    app = app_on(bench, tmp_path)

    async def run_before(pilot):
        await settle(pilot)
        await type_text(pilot, "/memory")
        await pilot.press("enter")
        await idle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_memory_file_view(bench, tmp_path, snap_compare):
    _write(tmp_path / "mem")
    app = app_on(bench, tmp_path)

    async def run_before(pilot):
        await settle(pilot)
        await type_text(pilot, "/memory")
        await pilot.press("enter")
        await idle(pilot)
        await pilot.press("down", "enter")  # the second file: notes/project.md
        await idle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_memory_diff(bench, tmp_path, snap_compare):
    _write(tmp_path / "mem")
    app = app_on(bench, tmp_path, memory_writes="ask")

    async def run_before(pilot):
        await settle(pilot)
        box = memory_of(app.session).box
        change = plan(box, {"command": "str_replace", "path": "/memories/notes/project.md",
                            "old_str": "Deadline: Friday.", "new_str": "Deadline: Monday (moved)."})
        app.push_screen(MemoryDiffScreen(MemoryProposal(change, box)))
        await idle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
