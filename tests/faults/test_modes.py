"""Issue 10, item 11 and issue 23, item 13: file modes. The program never changes the
mode of a file it did not create, refused ones included; what it creates is private whatever the umask: database
files (and SQLite's -wal and -shm) 0600, every folder it makes 0700 (the database's, the
logs', the memories', the config's: tests/tui/test_themes_keymap.py), all the missing
parents too, and a folder that was there keeps its mode. Run as the real command line
under umask 000.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ikigai_tui.support.folders import make_private_folders
from ikigai_tui.core.memory.commands import plan
from ikigai_tui.core.memory.sandbox import Sandbox
from ikigai_tui.store.sqlite.schema import SCHEMA_VERSION
from tests.conftest import run_ikigai


def _mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


def _ikigai_umask0(*args: str, **kw) -> subprocess.Popen:
    env = dict(os.environ, IKIGAI_OFFLINE_DELAY="0")
    return subprocess.Popen([sys.executable, "-m", "ikigai_tui", *args], umask=0, env=env,
                            text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, **kw)


def test_under_umask_000_new_folders_are_0700_and_files_0600(tmp_path):
    db = tmp_path / "a" / "b" / "c" / "x.db"
    proc = _ikigai_umask0("--db", str(db), "run")
    try:
        proc.stdin.write("hello\n")
        proc.stdin.flush()
        assert proc.stdout.readline().startswith("Offline model here.")
        # The program is running, waiting for the next line: SQLite's side files exist.
        files = {p.name: _mode(p) for p in db.parent.iterdir()}
    finally:
        out, err = proc.communicate("", timeout=30)
    assert proc.returncode == 0, err
    assert files == {"x.db": 0o600, "x.db-wal": 0o600, "x.db-shm": 0o600}
    for folder in (tmp_path / "a", tmp_path / "a" / "b", db.parent):
        assert _mode(folder) == 0o700, folder
    assert _mode(db) == 0o600


def test_under_umask_000_a_recovered_database_is_0600_in_a_0700_folder(tmp_path):
    db = tmp_path / "x.db"
    assert run_ikigai("--db", str(db), "run", input="hello\n").returncode == 0
    out = tmp_path / "new" / "deeper" / "saved.db"
    proc = _ikigai_umask0("--db", str(db), "check", "--recover", str(out))
    _, err = proc.communicate("", timeout=30)
    assert proc.returncode == 0, err
    assert _mode(out) == 0o600
    assert _mode(out.parent) == _mode(out.parent.parent) == 0o700


def _not_a_database(path: Path) -> None:
    path.write_text("my notes, not a database\n" * 100)


def _newer_schema(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE later (x)")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.commit()
    conn.close()


def _other_program(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE agents (codename TEXT)")
    conn.commit()
    conn.close()


@pytest.mark.parametrize("make", [_not_a_database, _newer_schema, _other_program],
                         ids=["not-a-database", "newer-schema", "another-program"])
@pytest.mark.parametrize("command", [["run"], ["log"], ["agents"], ["check"]])
def test_a_refused_file_keeps_its_mode_and_its_bytes(tmp_path, make, command):
    path = tmp_path / "theirs.db"
    make(path)
    os.chmod(path, 0o644)
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    done = run_ikigai("--db", str(path), *command, input="hello\n")
    assert done.returncode == 1
    assert done.stderr.startswith("Error: ") or "problems" in done.stdout, done.stderr
    assert "Traceback" not in done.stderr
    assert _mode(path) == 0o644
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["theirs.db"]


def test_an_existing_0644_database_stays_0644_after_a_write(tmp_path):
    db = tmp_path / "shared.db"
    assert run_ikigai("--db", str(db), "run", input="one\n").returncode == 0
    os.chmod(db, 0o644)
    done = run_ikigai("--db", str(db), "run", input="two\n")
    assert done.returncode == 0, done.stderr
    assert _mode(db) == 0o644


@contextlib.contextmanager
def _umask(mask: int) -> Iterator[None]:
    """This process's umask is `mask` inside."""
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def test_under_umask_000_the_log_folders_are_0700_parents_included(tmp_path):
    home = Path(os.environ["HOME"])  # a fresh folder of this test's (tests/conftest.py)
    proc = _ikigai_umask0("--db", str(tmp_path / "x.db"), "--debug", "run")
    _, err = proc.communicate("hello\n", timeout=60)
    assert proc.returncode == 0, err
    made = [home / ".local", home / ".local" / "state", home / ".local" / "state" / "ikigai",
            home / ".local" / "state" / "ikigai" / "log"]
    assert any(made[-1].iterdir())
    assert {str(p): _mode(p) for p in made} == {str(p): 0o700 for p in made}


@pytest.mark.parametrize("mask", [0o000, 0o277], ids=["umask-000", "umask-277"])
def test_the_memory_folders_are_0700_whatever_the_umask(tmp_path, mask):
    box = Sandbox(tmp_path / "x" / "y" / "memories")
    with _umask(mask):
        plan(box, {"command": "create", "path": "/memories/a/b/note.md",
                   "file_text": "kept"}).make(box)
    assert (tmp_path / "x/y/memories/a/b/note.md").read_text() == "kept"
    made = [tmp_path / "x", tmp_path / "x/y", tmp_path / "x/y/memories",
            tmp_path / "x/y/memories/a", tmp_path / "x/y/memories/a/b"]
    assert {str(p): _mode(p) for p in made} == {str(p): 0o700 for p in made}


def test_a_folder_that_exists_keeps_its_mode(tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    os.chmod(mine, 0o755)
    with _umask(0):
        make_private_folders(mine / "new" / "deeper")
    assert _mode(mine) == 0o755
    assert _mode(mine / "new") == _mode(mine / "new" / "deeper") == 0o700
