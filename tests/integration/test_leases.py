"""One process at a time runs an agent's turn: a second is refused at once; a lease
whose process died is taken over."""

from __future__ import annotations

import json
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from tests.integration.processes import agent_rows, finish_proc, lease_rows, log_rows, proc_env, start_ikigai


def test_a_second_process_running_a_turn_of_a_busy_agent_is_refused_at_once(tmp_path):
    """Two processes, one agent: while the first runs a (slow) turn, the second is
    refused before anything is written, with one line naming the holder; exit 1."""

    db = tmp_path / "busy.db"
    slow = busy_worker(db, delay="0.1")
    try:
        (agent_id, pid, host), = lease_rows(db)
        assert pid == slow.pid and host == socket.gethostname()
        events_before = len(log_rows(db))
        started = time.monotonic()
        second = run_ikigai_quick(db, "--agent", "worker", input="me too\n")
        refused_in = time.monotonic() - started
        assert second.returncode == 1
        assert second.stderr.strip().splitlines() == [
            f"Error: agent worker ({agent_id[:6]}) is busy in another ikigai process "
            f"(pid {slow.pid} on {host})"]
        assert "Offline model here" not in second.stdout
        assert not any(p.get("content") == "me too" for _, _, _, p in log_rows(db))
        assert len(log_rows(db)) >= events_before
        assert refused_in < 30  # at once: not after the first one's turn (3+ s)
        assert slow.poll() is None, "the refusal came after the turn, not during it"
    finally:
        out, err = finish_proc(slow)
    assert slow.returncode == 0, err
    assert lease_rows(db) == []  # released at the turn's end
    # Free again: the second process runs its turn now.
    again = run_ikigai_quick(db, "--agent", "worker", input="me too\n")
    assert again.returncode == 0, again.stderr
    assert 'You said: "me too"' in again.stdout


def busy_worker(db: Path, delay: str) -> subprocess.Popen:
    """A child agent `worker` whose slow turn (the offline model waiting `delay` seconds
    between words) another process runs; returned once that process holds its lease."""
    setup = start_ikigai(db, "run", stdin=subprocess.PIPE)
    _, err = setup.communicate("/fork --name worker\n", timeout=60)
    assert setup.returncode == 0, err
    script = db.with_suffix(".slow.txt")
    script.write_text("a long question " + "word " * 30 + "\n")
    slow = start_ikigai(db, "run", "--agent", "worker", "--script", str(script),
                        env=proc_env(IKIGAI_OFFLINE_DELAY=delay))
    deadline = time.monotonic() + 30
    while not lease_rows(db):
        if time.monotonic() > deadline or slow.poll() is not None:
            slow.kill()
            _, err = slow.communicate()
            raise AssertionError(f"no lease taken; stderr: {err[-2000:]}")
        time.sleep(0.02)
    return slow


def run_ikigai_quick(db: Path, *args: str, input: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ikigai_tui", "--db", str(db), "run", *args],
                          input=input, capture_output=True, text=True, timeout=60)


def test_a_lease_whose_process_died_is_taken_over(tmp_path):

    db = tmp_path / "dead.db"
    first = run_ikigai_quick(db, input="hello\n")
    assert first.returncode == 0, first.stderr
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    root_id = agent_rows(db)["root"][0]
    conn = sqlite3.connect(db, isolation_level=None)
    now = time.time()
    conn.execute("INSERT INTO leases VALUES (?, ?, ?, ?, ?)",
                 (root_id, gone.pid, socket.gethostname(), now, now))
    conn.close()
    second = run_ikigai_quick(db, input="after a crash\n")
    assert second.returncode == 0, second.stderr
    assert 'You said: "after a crash"' in second.stdout
    assert lease_rows(db) == []


def test_agents_shows_an_agent_another_process_runs_as_working(tmp_path):
    db = tmp_path / "seen.db"
    slow = busy_worker(db, delay="1")  # a turn of 40+ s
    host = socket.gethostname()

    def ikigai(*args: str, input: str | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "ikigai_tui", "--db", str(db), *args],
                              input=input, capture_output=True, text=True, timeout=60)

    try:
        listed = {a["name"]: a for a in json.loads(ikigai("agents", "--json").stdout)}
        assert listed["worker"]["status"] == "working"
        assert listed["worker"]["elsewhere"] == {"pid": slow.pid, "host": host}
        assert listed["root"]["status"] == "idle" and listed["root"]["elsewhere"] is None
        text = ikigai("agents").stdout
        assert f"working (pid {slow.pid} on {host})" in text
        tree = ikigai("run", input="/agents\n")
        assert tree.returncode == 0, tree.stderr
        worker_line = next(line for line in tree.stdout.splitlines() if "worker" in line)
        assert f"working (pid {slow.pid} on {host})" in worker_line
        assert slow.poll() is None, "the turn ended before the checks"
    finally:
        slow.send_signal(signal.SIGINT)  # Ctrl+C: the turn stops, its lease is released
        _, err = finish_proc(slow)
    assert slow.returncode == 130, err
    assert lease_rows(db) == []
    listed = {a["name"]: a for a in json.loads(ikigai("agents", "--json").stdout)}
    assert listed["worker"]["status"] == "idle" and listed["worker"]["elsewhere"] is None
