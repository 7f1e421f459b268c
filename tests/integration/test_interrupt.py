"""Ctrl-C in `ikigai run` stops the streaming reply, keeps what arrived, flags it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from tests.conftest import run_ikigai


def test_ctrl_c_keeps_the_partial_reply_flagged_interrupted(tmp_path):
    db = tmp_path / "i.db"
    env = dict(os.environ, IKIGAI_OFFLINE_DELAY="0.2")
    proc = subprocess.Popen(
        [sys.executable, "-m", "ikigai_tui", "--db", str(db), "run"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    proc.stdin.write("tell me a long story\n")
    proc.stdin.flush()
    first = proc.stdout.read(8)  # the reply has started streaming
    assert first
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.5)
    proc.stdin.write("/marks\n")
    out, err = proc.communicate(timeout=30)  # closes stdin: the run ends after /marks
    assert proc.returncode == 130  # interrupted (SPEC §11), though it went on
    assert "[interrupted" in err
    assert "No marks." in out  # the run went on after the interrupted reply
    log = json.loads(run_ikigai("--db", str(db), "log", "--json").stdout)
    kinds = [e["kind"] for e in log]
    assert kinds[0] == "user"
    replies = [e["payload"] for e in log if e["kind"] == "assistant"]
    assert len(replies) == 1 and replies[0]["interrupted"] is True
    text = replies[0]["content"]
    assert text and (first + out).startswith(text[: len(first)])
    assert len(text) < len("Offline model here. You said: \"tell me a long story\".")


def test_ctrl_c_when_idle_leaves(tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-m", "ikigai_tui", "--db", str(tmp_path / "q.db"), "run"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    proc.stdin.write("hello\n")
    proc.stdin.flush()
    assert proc.stdout.readline().startswith("Offline model")  # idle, waiting for input
    proc.send_signal(signal.SIGINT)
    # It leaves at once, with stdin still open (a terminal where nobody presses Enter).
    assert proc.wait(timeout=10) == 130
