"""Issue 10, item 6: two live processes fork a child of the same name. The second one
gets one `Error:` line (nothing of its command written) and the rest of its input goes
on; before, it died with sqlite3.IntegrityError."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time

from tests.conftest import run_ikigai


class Live:
    """`ikigai run` fed one line at a time."""

    def __init__(self, db) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "ikigai_tui", "--db", str(db), "run"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.out = b""

    def send(self, line: str, wait_for: bytes, timeout: float = 30) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while wait_for not in self.out:
            left = deadline - time.monotonic()
            assert left > 0 and self.proc.poll() is None, (
                f"no {wait_for!r} after {line!r}; out {self.out[-300:]!r}; "
                f"err {self.proc.stderr.read() if self.proc.poll() is not None else b''!r}")
            if select.select([fd], [], [], left)[0]:
                self.out += os.read(fd, 4096)

    def finish(self) -> tuple[int, str]:
        _, err = self.proc.communicate(timeout=30)
        return self.proc.returncode, err.decode()


def test_the_second_fork_of_a_name_is_one_error_line_and_input_goes_on(tmp_path):
    db = tmp_path / "race.db"
    assert run_ikigai("--db", str(db), "run", input="/mark start\n").returncode == 0
    first, second = Live(db), Live(db)
    try:
        # Both have read the agent tree before either forks.
        first.send("/agents", b"root")
        second.send("/agents", b"root")
        first.send("/fork --name twin", b"Forked. Child:")
        second.send("/fork --name twin\n/mark after", b"Checkpoint 'after' created.")
    finally:
        status_one, err_one = first.finish()
        status_two, err_two = second.finish()
    assert status_one == 0, err_one
    assert "Traceback" not in err_two
    assert status_two == 1
    assert err_two.splitlines() == [
        "Error: an agent named 'twin' already exists (another ikigai process made it just "
        "now); nothing was written"]
    events = json.loads(run_ikigai("--db", str(db), "log", "--json").stdout)
    forks = [e for e in events if e["kind"] == "fork"]
    assert len(forks) == 1  # the losing fork wrote nothing
    commands = [e["payload"]["text"] for e in events if e["kind"] == "command"]
    assert commands.count("/fork --name twin") == 1 and "/mark after" in commands
    agents = json.loads(run_ikigai("--db", str(db), "agents", "--json").stdout)
    assert sorted(a["name"] for a in agents) == ["root", "twin"]
