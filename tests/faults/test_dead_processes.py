"""Issue 23, item 16: a process killed in the middle of a reply (kill -9: nothing of it
runs again, not even its `finally`) leaves its user message unanswered. The next process
that takes the agent finds the dead holder's lease and flags that message as a failed
turn's is, so no request holds it and the next message as two user messages in a row.
A killed process its parent has not reaped yet (a zombie) holds nothing either."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import run_ikigai
from tests.faults.test_run_signals import _read_until

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

FIRST = "first message"
QUICK = {"IKIGAI_OFFLINE_DELAY": "0"}


def _killed_mid_reply(db: Path) -> subprocess.Popen:
    """`ikigai run` streaming its reply to FIRST, then killed with SIGKILL (not reaped:
    the caller decides)."""
    proc = subprocess.Popen([sys.executable, "-m", "ikigai_tui", "--db", str(db), "run"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL,
                            env=dict(os.environ, IKIGAI_OFFLINE_DELAY="0.3"))
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(f"{FIRST}\n".encode())
    proc.stdin.flush()
    _read_until(proc.stdout.fileno(), b"Offline model here.", timeout=30)
    os.kill(proc.pid, signal.SIGKILL)
    return proc


def _second_message_sees_one(db: Path) -> None:
    done = run_ikigai("--db", str(db), "run", input="second message\n", env=QUICK)
    assert done.returncode == 0, done.stderr
    # One user message: the unanswered one is joined to it, as after a failed turn.
    assert "I can see 1 message (1 from you)" in done.stdout, done.stdout
    events = json.loads(run_ikigai("--db", str(db), "log", "--json").stdout)
    first = next(e for e in events if e["kind"] == "user" and e["payload"]["content"] == FIRST)
    flags = [e["payload"] for e in events if e["kind"] == "interrupted"]
    assert len(flags) == 1 and flags[0]["unanswered"] == first["id"], flags
    assert "process running this turn ended" in flags[0]["reason"]
    context = run_ikigai("--db", str(db), "context").stdout
    assert f"user (its turn failed): {FIRST}" in context, context


def test_a_reply_killed_mid_stream_leaves_its_message_flagged_failed(tmp_path):
    db = tmp_path / "k.db"
    proc = _killed_mid_reply(db)
    proc.wait(timeout=10)
    _second_message_sees_one(db)


def _state(pid: int) -> str:
    with open(f"/proc/{pid}/stat", "rb") as stat:
        return stat.read().rpartition(b")")[2].split()[0].decode()


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads the state from /proc")
def test_a_killed_process_not_yet_reaped_holds_no_agent(tmp_path):
    """This test is the parent that does not wait: the killed `run` stays a zombie."""
    db = tmp_path / "z.db"
    proc = _killed_mid_reply(db)
    try:
        deadline = time.monotonic() + 10
        while _state(proc.pid) != "Z":
            assert time.monotonic() < deadline, "the killed process never became a zombie"
            time.sleep(0.05)
        agents = run_ikigai("--db", str(db), "agents")
        assert agents.returncode == 0, agents.stderr
        assert "working" not in agents.stdout and " idle " in agents.stdout, agents.stdout
        _second_message_sees_one(db)
        assert _state(proc.pid) == "Z"  # still not reaped: the zombie was tested
    finally:
        proc.wait(timeout=10)
