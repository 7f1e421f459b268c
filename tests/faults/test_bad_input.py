"""Issue 10, items 7 and 8: bad input gets one clear line, writes nothing, and the next
line is still processed; settings that cannot work are refused at start."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.conftest import run_ikigai

RANDOM_RUNS = 60


def _run_bytes(db, data: bytes, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ikigai_tui", "--db", str(db), *args, "run"],
                          input=data, capture_output=True, timeout=60,
                          env=dict(os.environ, **(env or {})))


def _events(db) -> list[dict]:
    return json.loads(run_ikigai("--db", str(db), "log", "--json").stdout)


def _users(db) -> list[str]:
    return [e["payload"]["content"] for e in _events(db) if e["kind"] == "user"]


def test_invalid_utf8_on_stdin_is_one_line_and_later_lines_are_kept(tmp_path):
    db = tmp_path / "u.db"
    done = _run_bytes(db, b"before\nbad \xff\xfe bytes\n/pin caf\xe9\n/mark after\nlast one\n")
    err = done.stderr.decode()
    assert done.returncode == 1
    assert "Traceback" not in err
    errors = err.splitlines()
    assert len(errors) == 2, errors
    assert errors[0].startswith("Error: line 2 is not valid UTF-8")
    assert errors[1].startswith("Error: line 3 is not valid UTF-8")
    assert _users(db) == ["before", "last one"]
    kinds = [e["kind"] for e in _events(db)]
    assert "pin" not in kinds and "mark" in kinds
    assert b"Checkpoint 'after' created." in done.stdout


def test_invalid_utf8_in_a_script_file(tmp_path):
    db = tmp_path / "s.db"
    script = tmp_path / "script.txt"
    script.write_bytes(b"one\r\n\xc3\x28 broken\r\ntwo\r\n")
    done = run_ikigai("--db", str(db), "run", "--script", str(script))
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "Error: line 2 is not valid UTF-8 (byte 0xc3 at column 1); skipped, nothing written"]
    assert _users(db) == ["one", "two"]  # CRLF line ends are line ends


def test_only_line_feeds_split_inputs(tmp_path):
    """A form feed or U+2028 inside a message stays in that message."""
    db = tmp_path / "ff.db"
    done = _run_bytes(db, "page\x0cbreak and\u2028separator\n".encode())
    assert done.returncode == 0, done.stderr
    assert _users(db) == ["page\x0cbreak and\u2028separator"]


def test_a_line_starting_with_two_slashes_is_a_message(tmp_path):
    db = tmp_path / "sl.db"
    done = _run_bytes(db, b"//etc/hosts is a path\n")
    assert done.returncode == 0, done.stderr
    assert _users(db) == ["/etc/hosts is a path"]


def _random_input(seed: int) -> bytes:
    rng = random.Random(seed)
    noise = bytes(rng.randrange(256) for _ in range(rng.randrange(50, 400)))
    # Random bytes, with the odd line break, between two ordinary lines.
    return b"start %d\n" % seed + noise + b"\nlast line %d\n" % seed


def test_random_bytes_on_stdin_never_crash_and_later_lines_are_kept(tmp_path):
    def one(seed: int) -> tuple[int, subprocess.CompletedProcess]:
        return seed, _run_bytes(tmp_path / f"r{seed}.db", _random_input(seed))

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(one, range(RANDOM_RUNS)))
    assert len(results) >= 50
    for seed, done in results:
        err = done.stderr.decode("utf-8", "replace")
        assert "Traceback" not in err, f"seed {seed}: {err[-1500:]}"
        assert done.returncode in (0, 1), f"seed {seed}: status {done.returncode}: {err[-500:]}"
        assert all(line.startswith(("Error:", "[interrupted")) for line in err.splitlines()), (
            f"seed {seed}: {err[-500:]}")
        # The line after the noise was read and answered.
        assert f'You said: "last line {seed}"'.encode() in done.stdout, f"seed {seed}"
    # And one database, checked whole: the ordinary lines are stored.
    users = _users(tmp_path / "r7.db")
    assert users[0] == "start 7" and users[-1] == "last line 7"


@pytest.mark.parametrize(("env", "args", "wanted"), [
    ({"IKIGAI_TIMEOUT": "0"}, [], "IKIGAI_TIMEOUT='0' must be more than 0 seconds"),
    ({"IKIGAI_TIMEOUT": "-1"}, [], "IKIGAI_TIMEOUT='-1' must be more than 0 seconds"),
    ({"IKIGAI_TIMEOUT": "inf"}, [], "IKIGAI_TIMEOUT='inf' must be a finite number"),
    ({"IKIGAI_OFFLINE_DELAY": "nan"}, [], "IKIGAI_OFFLINE_DELAY='nan' must be a finite number"),
    ({"IKIGAI_OFFLINE_DELAY": "-5"}, [], "IKIGAI_OFFLINE_DELAY='-5' must be 0 or more"),
    ({"IKIGAI_MAX_RETRIES": "-1"}, [], "IKIGAI_MAX_RETRIES='-1' must be 0 or more"),
    ({}, ["--model", ""], "--model is empty"),
    ({}, ["--model", "  "], "--model is empty"),
    ({}, ["--api-base", ""], "--api-base is empty"),
    ({}, ["--model", "gpt"], "'gpt' is not a model name"),
])
def test_settings_that_cannot_work_are_refused_at_start(tmp_path, env, args, wanted):
    db = tmp_path / "cfg.db"
    done = subprocess.run([sys.executable, "-m", "ikigai_tui", "--db", str(db), *args, "run"],
                          input="hello\n", capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, **env))
    assert done.returncode == 2  # a configuration error
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and wanted in lines[0], lines
    assert not db.exists()  # nothing written


@pytest.mark.parametrize(("line", "wanted"), [
    ("timeout = 0", "'timeout' must be more than 0 seconds"),
    ("timeout = nan", "'timeout' must be a finite number"),
    ("offline_delay = -inf", "'offline_delay' must be a finite number"),
    ("offline_delay = -1", "'offline_delay' must be 0 or more"),
    ('model = ""', "'model' must not be empty"),
])
def test_config_file_settings_that_cannot_work_name_the_line(tmp_path, line, wanted):
    config = tmp_path / "config.toml"
    config.write_text(f'system_prompt = "hi"\n{line}\n')
    done = run_ikigai("--db", str(tmp_path / "c.db"), "--config", str(config), "run", input="x\n")
    assert done.returncode == 2
    assert done.stderr == f"Error: {config}, line 2: {wanted}\n"
    assert not (tmp_path / "c.db").exists()
