"""Acceptance, SPEC §5 ("commands that would change the context mid-turn take effect when
the turn ends") across processes: a /clear, /rewind, /forget or /undo typed in a second
`ikigai` while the first is in the agent's turn cannot wait for that turn's end in the
other process, so it is refused with one Error line and writes nothing."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from tests.integration.processes import finish_proc, lease_rows, log_rows, proc_env, start_ikigai


def run_quick(db, *lines: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ikigai_tui", "--db", str(db), "run"],
                          input="".join(f"{line}\n" for line in lines), capture_output=True,
                          text=True, timeout=60)


@pytest.mark.parametrize("line", ["/clear", "/rewind A", "/forget --ids 1", "/undo"])
def test_a_context_change_from_another_process_mid_turn_is_refused(database, tmp_path, line):
    db = database("x")
    setup = run_quick(db, "first", "/mark A", "second", "/pin a note")
    assert setup.returncode == 0, setup.stderr
    script = tmp_path / "slow.txt"
    script.write_text("a long question " + "word " * 30 + "\n")
    slow = start_ikigai(db, "run", "--script", str(script), env=proc_env(IKIGAI_OFFLINE_DELAY="0.1"))
    try:
        deadline = time.monotonic() + 30
        while not lease_rows(db):
            assert time.monotonic() < deadline and slow.poll() is None, "no lease taken"
            time.sleep(0.02)
        before = log_rows(db)
        done = run_quick(db, line)
        assert slow.poll() is None, "the check came after the turn, not during it"
        assert done.returncode == 1, (done.stdout, done.stderr)
        (error,) = done.stderr.strip().splitlines()
        assert error.startswith("Error: agent root (") and "busy in another ikigai process" in error
        assert log_rows(db)[:len(before)] == before
        assert not [r for r in log_rows(db) if r[2] in ("clear", "rewind", "filter", "undo")
                    and r[0] > before[-1][0]]
    finally:
        out, err = finish_proc(slow)
    assert slow.returncode == 0, err
    # The turn is whole: its question and its reply, nothing taken out under it.
    again = run_quick(db, "/marks")
    assert again.returncode == 0, again.stderr
    done = run_quick(db, line)
    assert done.returncode == 0, done.stderr        # free again once the turn is over
