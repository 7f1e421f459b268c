"""`make test` runs the suite on every core, then the `serial` tests alone; a developer can
still run a file in one process, and snapshot updates never run under workers (Makefile)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def _pytest_lines(*make_args: str) -> list[str]:
    """The pytest command lines `make -n test ...` would run, as printed (nothing is run)."""
    # Not the variables of a `make test` this runs under (MAKEFLAGS carries its PYTEST_ARGS)
    env = {name: value for name, value in os.environ.items()
           if name not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "PYTEST_ARGS", "JOBS")}
    done = subprocess.run(["make", "-n", "-C", str(ROOT), "test", *make_args],
                          capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    return [line for line in done.stdout.splitlines() if " -m pytest" in line]


def _pytest_runs(*make_args: str) -> list[list[str]]:
    """The arguments of those pytest runs."""
    runs = [shlex.split(line.split("||")[0]) for line in _pytest_lines(*make_args)]
    return [run[run.index("pytest") + 1:] for run in runs]


def test_the_default_runs_on_every_core_then_the_serial_tests_alone():
    parallel, serial = _pytest_runs()
    assert parallel == ["-m", "not serial", "-n", "auto"]
    assert serial == ["-m", "serial", "-n", "0"]


def test_pytest_args_reach_both_runs_and_the_last_n_wins():
    parallel, serial = _pytest_runs("PYTEST_ARGS=tests/unit/test_x.py -n 0")
    assert parallel[-3:] == ["tests/unit/test_x.py", "-n", "0"]
    assert serial[:3] == ["-m", "serial", "tests/unit/test_x.py"] and serial[-2:] == ["-n", "0"]
    assert _pytest_runs("JOBS=3")[0][-2:] == ["-n", "3"]


def test_without_the_plugin_no_n_option_is_passed():
    for run in _pytest_runs("PYTEST_ARGS=tests/unit/test_x.py -p no:xdist"):
        assert "-n" not in run and run[-2:] == ["-p", "no:xdist"]


def test_a_snapshot_update_is_one_run_in_one_process():
    (run,) = _pytest_runs("PYTEST_ARGS=tests/tui/test_snapshots.py --snapshot-update")
    assert run == ["tests/tui/test_snapshots.py", "--snapshot-update", "-n", "0"]
    assert "-m" not in run


def test_the_runs_write_bytecode_so_rewritten_test_modules_are_kept():
    lines = _pytest_lines()
    assert len(lines) == 2
    for line in lines:
        words = shlex.split(line)
        assert ("-u", "PYTHONDONTWRITEBYTECODE") in zip(words, words[1:]), line


def test_the_serial_marker_is_registered(pytestconfig):
    assert [m for m in pytestconfig.getini("markers") if m.startswith("serial:")]
