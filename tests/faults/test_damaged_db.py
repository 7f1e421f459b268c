"""Issue 10, item 9: a database with a damaged page. Every command says so in one line
(exit status 1, no traceback) and names the way out; `ikigai check` finds the damage,
and `check --recover OUT` saves every row that can still be read into a new database.

The damaged files are real ones: a log of 450 events written by the program, then one of
its pages overwritten with garbage (which page holds what comes from SQLite's dbstat).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from ikigai_tui.store.sqlite.store import Store
from tests.conftest import run_ikigai

MESSAGES = 150  # 450 events: user, assistant, usage per message


@pytest.fixture(scope="module")
def healthy(tmp_path_factory) -> Path:
    """A log made by the program (offline model), shared read-only by the tests."""
    folder = tmp_path_factory.mktemp("healthy")
    db = folder / "made.db"
    script = folder / "inputs.txt"
    # Every tenth message is long: its row spills into a chain of overflow pages.
    script.write_text("".join(f"note {i}: the walrus{i} sings of tea and ships"
                              + (" and so on" * 1500 if i % 10 == 0 else "") + "\n"
                              for i in range(1, MESSAGES + 1)))
    env = {k: v for k, v in os.environ.items() if not k.startswith("IKIGAI_")}
    env.update(HOME=str(folder), XDG_DATA_HOME=str(folder / "data"),
               XDG_CONFIG_HOME=str(folder / "config"), IKIGAI_OFFLINE_DELAY="0")
    done = subprocess.run([sys.executable, "-m", "ikigai_tui", "--db", str(db), "run",
                           "--script", str(script)], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return db


def _pages(db: Path) -> dict[str, list[tuple[int, str]]]:
    """{table or index: [(page number, 'leaf' | 'internal' | 'overflow'), ...]}."""
    conn = sqlite3.connect(db)
    try:
        out: dict[str, list[tuple[int, str]]] = {}
        for name, page, kind in conn.execute(
                "SELECT name, pageno, pagetype FROM dbstat ORDER BY pageno"):
            out.setdefault(name, []).append((page, kind))
        return out
    finally:
        conn.close()


def _damage(source: Path, target: Path, page: int) -> Path:
    shutil.copy(source, target)
    conn = sqlite3.connect(source)
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    assert page >= 1
    with open(target, "r+b") as handle:
        handle.seek((page - 1) * size)
        handle.write(bytes((i * 37 + 11) % 256 for i in range(size)))
    return target


def _rows(db: Path) -> dict[int, tuple]:
    conn = sqlite3.connect(db)
    try:
        return {r[0]: r[1:] for r in conn.execute(
            "SELECT id, agent_id, kind, payload, created_at FROM events")}
    finally:
        conn.close()


@pytest.fixture
def events_leaf(healthy, tmp_path) -> Path:
    """The second leaf page of the events table damaged: some events lost, most kept."""
    leaves = [p for p, kind in _pages(healthy)["events"] if kind == "leaf"]
    return _damage(healthy, tmp_path / "leaf.db", leaves[1])


@pytest.fixture
def agents_page(healthy, tmp_path) -> Path:
    (page, _), = _pages(healthy)["agents"]
    return _damage(healthy, tmp_path / "agents.db", page)


@pytest.fixture
def events_root(healthy, tmp_path) -> Path:
    """The root (interior) page of the events table damaged: SQL reaches no event."""
    conn = sqlite3.connect(healthy)
    (root,), = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'events'")
    conn.close()
    assert (root, "internal") in _pages(healthy)["events"]
    return _damage(healthy, tmp_path / "root.db", root)


def _one_error_line(done: subprocess.CompletedProcess, db: Path) -> str:
    assert done.returncode == 1, (done.stdout[-500:], done.stderr[-2000:])
    assert "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, lines[:5]
    line = lines[0]
    assert line.startswith("Error: ") and "damaged" in line, line
    assert str(db) in line and "check --recover" in line, line
    return line


# -- one line for every command ----------------------------------------------------


@pytest.mark.parametrize("command", [["log"], ["context"], ["export"], ["log", "--json"],
                                     ["context", "--json"], ["export", "--format", "json"]])
def test_reading_a_damaged_page_is_one_line_naming_the_recovery(events_leaf, command):
    done = run_ikigai("--db", str(events_leaf), *command)
    _one_error_line(done, events_leaf)
    assert done.stdout == ""


@pytest.mark.parametrize("command", [["agents"], ["agents", "--json"], ["log"]])
def test_a_damaged_agents_table_is_one_line_and_exit_1(agents_page, command):
    _one_error_line(run_ikigai("--db", str(agents_page), *command), agents_page)


def test_run_on_a_damaged_log_is_one_line_and_writes_nothing(events_leaf):
    before = events_leaf.read_bytes()
    done = run_ikigai("--db", str(events_leaf), "run", input="hello\n")
    _one_error_line(done, events_leaf)
    assert events_leaf.read_bytes() == before


# -- ikigai check --------------------------------------------------------------------


def test_check_on_a_healthy_log_reports_agents_and_events_and_exits_0(healthy):
    done = run_ikigai("--db", str(healthy), "check")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"1 agents, {3 * MESSAGES} events, 0 problems" in done.stdout
    assert "Healthy" in done.stdout
    assert done.stderr == ""


def test_check_finds_the_damage_and_exits_1(events_leaf):
    done = run_ikigai("--db", str(events_leaf), "check")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    first = done.stdout.splitlines()[0]
    assert first.startswith(f"{events_leaf}: 1 agents, ") and " 0 problems" not in first
    assert "Damaged" in done.stdout and "check --recover" in done.stdout
    assert "cannot be replayed" in done.stdout


def test_check_opens_read_only_and_changes_nothing(events_leaf):
    before = events_leaf.read_bytes()
    os.chmod(events_leaf, 0o444)
    done = run_ikigai("--db", str(events_leaf), "check")
    assert done.returncode == 1
    assert events_leaf.read_bytes() == before
    assert events_leaf.stat().st_mode & 0o777 == 0o444


def test_recover_saves_every_readable_event_with_its_id(healthy, events_leaf, tmp_path):
    original = _rows(healthy)
    out = tmp_path / "saved" / "recovered.db"
    done = run_ikigai("--db", str(events_leaf), "check", "--recover", str(out))
    assert done.returncode == 1, done.stdout + done.stderr  # the source is still damaged
    assert "Traceback" not in done.stderr
    saved = _rows(out)
    lost = sorted(set(original) - set(saved))
    # Exactly one leaf page was damaged: the lost ids are one run, a few dozen at most.
    assert 0 < len(lost) < 60 and lost == list(range(lost[0], lost[-1] + 1)), lost
    assert all(saved[i] == original[i] for i in saved)
    assert f"{len(saved)} events saved, {len(lost)} lost (ids {lost[0]}-{lost[-1]})" in done.stdout
    assert out.stat().st_mode & 0o777 == 0o600
    assert out.parent.stat().st_mode & 0o777 == 0o700
    assert sorted(p.name for p in out.parent.iterdir()) == ["recovered.db"]  # no leftovers
    # The new database is sound, replays, and its full-text index was rebuilt.
    check = run_ikigai("--db", str(out), "check")
    assert check.returncode == 0, check.stdout
    assert f"1 agents, {len(saved)} events, 0 problems" in check.stdout
    log = json.loads(run_ikigai("--db", str(out), "log", "--json").stdout)
    assert [e["id"] for e in log] == sorted(saved)
    kept_user = next(e for e in log if e["kind"] == "user")
    word = kept_user["payload"]["content"].split()[3]  # "walrusN"

    async def search() -> list[int]:
        store = await Store.open(out, readonly=True)
        try:
            return [e.id for e in await store.search(word, [kept_user["agent"]])]
        finally:
            await store.close()

    assert kept_user["id"] in asyncio.run(search())


def test_recover_reads_the_leaves_under_a_damaged_interior_page(healthy, events_root, tmp_path):
    """Every event sits intact in a leaf that SQL cannot reach: read from the pages,
    long rows through their overflow chains, all are saved exactly."""
    assert run_ikigai("--db", str(events_root), "log").returncode == 1
    out = tmp_path / "r.db"
    done = run_ikigai("--db", str(events_root), "check", "--recover", str(out))
    assert "Traceback" not in done.stderr
    assert f"{3 * MESSAGES} events saved, none lost" in done.stdout, done.stdout
    assert _rows(out) == _rows(healthy)
    assert any(len(payload) > 10_000 for _, _, payload, _ in _rows(out).values())
    assert run_ikigai("--db", str(out), "check").returncode == 0


def test_recover_rebuilds_a_lost_agent_row_from_its_events(healthy, agents_page, tmp_path):
    out = tmp_path / "r.db"
    done = run_ikigai("--db", str(agents_page), "check", "--recover", str(out))
    assert "Traceback" not in done.stderr
    assert "1 stand-in agents" in done.stdout and f"{3 * MESSAGES} events saved" in done.stdout
    agents = json.loads(run_ikigai("--db", str(out), "agents", "--json").stdout)
    original = json.loads(run_ikigai("--db", str(healthy), "agents", "--json").stdout)
    assert [(a["id"], a["name"], a["parent"]) for a in agents] == \
           [(a["id"], a["name"], a["parent"]) for a in original]
    context = json.loads(run_ikigai("--db", str(out), "context", "--json").stdout)
    assert len(context["messages"]) == 2 * MESSAGES


def test_a_damaged_first_page_is_reported_and_recover_creates_nothing(healthy, tmp_path):
    db = _damage(healthy, tmp_path / "head.db", 1)
    before = db.read_bytes()
    done = run_ikigai("--db", str(db), "log")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert len(done.stderr.splitlines()) == 1 and "first page is damaged" in done.stderr
    out = tmp_path / "new" / "r.db"
    done = run_ikigai("--db", str(db), "check", "--recover", str(out))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith("Error: ") and "nothing can be saved" in done.stderr
    assert not out.parent.exists()
    assert db.read_bytes() == before


def test_recover_never_writes_over_an_existing_file(events_leaf, tmp_path):
    out = tmp_path / "precious.db"
    out.write_text("keep me")
    done = run_ikigai("--db", str(events_leaf), "check", "--recover", str(out))
    assert done.returncode == 1
    assert done.stderr.startswith("Error: ") and "already exists" in done.stderr
    assert len(done.stderr.splitlines()) == 1
    assert out.read_text() == "keep me"


def test_the_full_screen_program_starts_with_one_line_on_a_damaged_log(events_leaf):
    """The TUI loads the focused agent's page before its first frame: the damage met
    there ends it with the same one line (printed by the CLI), status 1."""
    from ikigai_tui.config import load
    from ikigai_tui.runtime import create_app

    app = create_app(load(db=str(events_leaf)))

    async def start() -> None:
        async with app.run_test() as pilot:
            # The whole log is replayed in a worker after the first frame: wait for it
            # to meet the damage (or for the time to run out).
            for _ in range(200):
                if app.return_code is not None:
                    break
                await pilot.pause(0.05)

    asyncio.run(start())
    assert app.return_code == 1
    assert app.startup_error is not None
    assert "damaged" in app.startup_error and "check --recover" in app.startup_error
