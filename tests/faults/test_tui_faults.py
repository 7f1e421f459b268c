"""The full-screen program under faults: SIGTERM, SIGHUP or the terminal closing while a
reply streams. What arrived is committed, flagged interrupted, and the program exits.

The real program runs in a pseudo-terminal (tests/tui/pty_harness.py) with the offline
model slowed down, so the reply is still streaming when the fault comes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.tui.pty_harness import launch  # noqa: F401  (a fixture)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pty")

DELAY = "0.15"  # seconds per word of the offline reply: about 5 s for the whole of it
MESSAGE = "tell me a long story"


def _log(db: Path) -> list[dict]:
    out = subprocess.run([sys.executable, "-m", "ikigai_tui", "log", "--json", "--db", str(db)],
                         capture_output=True, text=True, timeout=30, check=True)
    return json.loads(out.stdout)


def _start_a_reply(launch, db: Path):  # noqa: F811
    term = launch(db, {"IKIGAI_OFFLINE_DELAY": DELAY})
    term.wait_for("offline model, no network", "Sent:", timeout=10)
    term.type(MESSAGE)
    term.wait_for(MESSAGE, timeout=5)
    term.type("\r")
    # The first words of the reply are on screen; the rest is still coming.
    term.wait_for("Offline model here. You said:", timeout=10)
    return term


def _assert_partial_kept(db: Path, term) -> None:
    events = _log(db)
    users = [e for e in events if e["kind"] == "user"]
    assert [e["payload"]["content"] for e in users] == [MESSAGE]
    replies = [e for e in events if e["kind"] == "assistant"]
    assert len(replies) == 1, f"no reply stored: {events}\nscreen:\n{term.text()[-2000:]}"
    payload = replies[0]["payload"]
    assert payload.get("interrupted") is True, payload
    content = payload["content"]
    assert content.startswith("Offline model here. You said:"), content
    # Part of the reply, not all of it: the whole one ends with the first message quoted.
    assert not content.rstrip().endswith(f'"{MESSAGE}".'), content


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_stop_signal_mid_reply_keeps_the_partial_reply(launch, tmp_path, signum):  # noqa: F811
    db = tmp_path / "signal.db"
    term = _start_a_reply(launch, db)
    before = len(term.raw)
    os.kill(term.proc.pid, signum)
    status = term.wait_exit(timeout=10)
    assert status == 128 + signum, f"exit status {status}; screen:\n{term.text()[-2000:]}"
    assert "Traceback" not in term.text()
    # The terminal is still there: it is given back as it was (main screen, cursor shown).
    after = bytes(term.raw[before:])
    assert b"\x1b[?1049l" in after and b"\x1b[?25h" in after
    _assert_partial_kept(db, term)


def test_the_terminal_closing_mid_reply_keeps_the_partial_reply(launch, tmp_path):  # noqa: F811
    db = tmp_path / "hangup.db"
    term = _start_a_reply(launch, db)
    term.hang_up()  # the kernel hangs up the program's terminal; writes to it fail
    deadline = time.monotonic() + 10
    while term.proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert term.proc.poll() == 128 + signal.SIGHUP, \
        f"the program did not leave after its terminal closed ({term.proc.poll()})"
    _assert_partial_kept(db, term)


def test_a_kill_mid_reply_leaves_the_message_flagged_for_the_next_start(launch, tmp_path):  # noqa: F811
    """kill -9 (issue 23, item 16): nothing of the killed program runs, its message is
    left unanswered. The next start's message is joined to it, as after a failed turn,
    never sent as a second user message in a row."""
    db = tmp_path / "killed.db"
    term = _start_a_reply(launch, db)
    os.kill(term.proc.pid, signal.SIGKILL)
    assert term.wait_exit(timeout=10) == -signal.SIGKILL
    again = launch(db, {"IKIGAI_OFFLINE_DELAY": "0"})
    again.wait_for("offline model, no network", "Sent:", timeout=10)
    again.type("and then?")
    again.wait_for("and then?", timeout=5)
    again.type("\r")
    again.wait_for("from you)", timeout=10)
    deadline = time.monotonic() + 10
    while not (replies := [e for e in _log(db) if e["kind"] == "assistant"]):
        assert time.monotonic() < deadline, again.text()[-2000:]
        time.sleep(0.1)
    assert "I can see 1 message (1 from you)" in replies[0]["payload"]["content"], replies
    flags = [e["payload"] for e in _log(db) if e["kind"] == "interrupted"]
    assert len(flags) == 1 and "process running this turn ended" in flags[0]["reason"], flags
