"""The command line's own errors: one `Error:` line, exit status 2 for usage and
configuration errors, nothing created; a reader that stops early is no error."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import run_ikigai

COMMANDS = (["agents"], ["agents", "--json"], ["run"], ["context"], ["log"], ["export"],
            ["check"])


def _one_error(done: subprocess.CompletedProcess, wanted: str) -> None:
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and wanted in lines[0], lines
    assert done.stdout == ""


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_bad_model_name_is_a_usage_error_and_creates_nothing(tmp_path, command):
    db = tmp_path / "new" / "x.db"
    done = run_ikigai("--db", str(db), "--model", "nonsense", *command, input="hello\n")
    assert done.returncode == 2
    _one_error(done, "'nonsense' is not a model name")
    assert not db.parent.exists()


@pytest.mark.parametrize("where", ["env", "file"])
def test_a_bad_configured_model_is_a_usage_error(tmp_path, where):
    db = tmp_path / "x.db"
    config = tmp_path / "config.toml"
    env = {"IKIGAI_CONFIG": str(config)}
    if where == "env":
        env["IKIGAI_MODEL"] = "gpt4"
    else:
        config.write_text('model = "gpt4"\n')
    done = run_ikigai("--db", str(db), "run", input="hello\n", env=env)
    assert done.returncode == 2
    _one_error(done, "'gpt4' is not a model name")
    assert not db.exists()


def test_a_missing_script_or_agent_on_a_new_database_creates_nothing(tmp_path):
    db = tmp_path / "new" / "x.db"
    done = run_ikigai("--db", str(db), "run", "--script", str(tmp_path / "nope.txt"))
    assert done.returncode == 2
    _one_error(done, "cannot read script")
    done = run_ikigai("--db", str(db), "run", "--agent", "kiwi", input="hello\n")
    assert done.returncode == 2
    _one_error(done, "no agent named or with id starting 'kiwi'")
    assert not db.parent.exists()


def test_a_folder_as_script_is_a_usage_error_and_creates_nothing(tmp_path):
    db = tmp_path / "new" / "x.db"
    done = run_ikigai("--db", str(db), "run", "--script", str(tmp_path))
    assert done.returncode == 2
    _one_error(done, f"cannot read script {tmp_path}: it is a folder")
    assert not db.parent.exists()


def test_an_unknown_agent_is_a_usage_error_for_every_report(tmp_path):
    db = tmp_path / "x.db"
    assert run_ikigai("--db", str(db), "run", input="hello\n").returncode == 0
    before = db.read_bytes()
    for command in (["run"], ["context"], ["log"], ["export"]):
        done = run_ikigai("--db", str(db), *command, "--agent", "kiwi", input="hi\n")
        assert done.returncode == 2, command
        _one_error(done, "no agent named or with id starting 'kiwi'")
        assert "ikigai agents" in done.stderr
    assert db.read_bytes() == before


@pytest.fixture(scope="module")
def long_db(tmp_path_factory):
    """A log whose every report is longer than a pipe holds (64 KiB)."""
    db = tmp_path_factory.mktemp("long") / "long.db"
    lines = "".join(f"message number {i} {'padding ' * 20}\n" for i in range(300))
    done = run_ikigai("--db", str(db), "run", input=lines, timeout=120)
    assert done.returncode == 0, done.stderr
    return db


@pytest.mark.parametrize("command", [
    ["log"], ["log", "--json"], ["context"], ["context", "--json"], ["export"],
    ["export", "--format", "json"], ["agents", "--json"],
], ids=" ".join)
def test_a_reader_that_stops_early_is_not_an_error(long_db, command):
    """`ikigai log --json | head`: the reader goes away; no traceback, status 0."""
    proc = subprocess.Popen([sys.executable, "-m", "ikigai_tui", "--db", str(long_db), *command],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ))
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.read(10)
    proc.stdout.close()  # as `head` does once it has its lines
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 0, err
    assert err == ""
