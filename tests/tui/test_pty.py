"""The real program in a pseudo-terminal: `python -m ikigai_tui --db X` at 120x40, a
message typed and answered by the offline model, then `/exit` ends it with status 0."""

from __future__ import annotations

import errno
import fcntl
import os
import re
import select
import struct
import subprocess
import sys
import termios
import time

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pty")

ROWS, COLS = 40, 120
# CSI (with private and intermediate bytes), OSC / DCS / APC strings, then 2-byte escapes.
ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b[\]P_^][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[@-Z\\-_]"
    r"|\x1b[ -/]*[0-~]"
)


def strip_ansi(raw: bytes) -> str:
    return ANSI.sub("", raw.decode("utf-8", errors="replace"))


class Terminal:
    """The master side of the pty: everything the program drew, and the keys to type."""

    def __init__(self, fd: int, proc: subprocess.Popen) -> None:
        self.fd = fd
        self.proc = proc
        self.raw = bytearray()
        self.closed = False

    def _read(self, timeout: float) -> None:
        if self.closed:
            time.sleep(min(timeout, 0.05))
            return
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return
        try:
            data = os.read(self.fd, 65536)
        except OSError as exc:  # EIO: the program closed its side
            if exc.errno != errno.EIO:
                raise
            data = b""
        if data:
            self.raw += data
        else:
            self.closed = True

    def text(self) -> str:
        return strip_ansi(bytes(self.raw))

    def wait_for(self, *needles: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            shown = self.text()
            if all(n in shown for n in needles):
                return
            if self.proc.poll() is not None and self.closed:
                pytest.fail(f"the program exited ({self.proc.returncode}) before showing "
                            f"{needles!r}; it showed:\n{shown[-3000:]}")
            left = deadline - time.monotonic()
            if left <= 0:
                pytest.fail(f"no {needles!r} on screen within {timeout}s; it showed:\n{shown[-3000:]}")
            self._read(min(left, 0.1))

    def type(self, keys: str) -> None:
        os.write(self.fd, keys.encode("utf-8"))

    def wait_exit(self, timeout: float) -> int | None:
        """Keep draining the screen (a full pty would block the program) until it exits."""
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < deadline:
            self._read(0.05)
        while not self.closed and time.monotonic() < deadline + 1:
            self._read(0.05)
        return self.proc.poll()


def _controlling_tty() -> None:
    # In the child, after setsid (start_new_session): make the pty its terminal.
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


@pytest.fixture
def launch(tmp_path):
    """Start `python -m ikigai_tui --db DB` in a new pty; killed at the end if still running."""
    started: list[Terminal] = []

    def start(db) -> Terminal:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
        env = dict(os.environ)
        for name in ("NO_COLOR", "TEXTUAL_THEME", "TEXTUAL", "COLORTERM"):
            env.pop(name, None)
        env.update(TERM="xterm-256color", COLUMNS=str(COLS), LINES=str(ROWS))
        proc = subprocess.Popen(
            [sys.executable, "-m", "ikigai_tui", "--db", str(db)],
            stdin=slave, stdout=slave, stderr=slave, env=env, cwd=tmp_path,
            start_new_session=True, preexec_fn=_controlling_tty, close_fds=True,
        )
        os.close(slave)
        started.append(Terminal(master, proc))
        return started[-1]

    yield start
    for term in started:
        if term.proc.poll() is None:
            term.proc.kill()
            term.proc.wait(timeout=5)
        os.close(term.fd)


@pytest.fixture
def terminal(launch, tmp_path):
    return launch(tmp_path / "pty.db")


def test_message_and_exit_in_a_real_terminal(terminal):
    terminal.wait_for("offline model, no network", "Context:", "Send", timeout=10)
    terminal.type("hello from the pty")
    terminal.wait_for("hello from the pty", timeout=5)
    terminal.type("\r")
    terminal.wait_for('You said: "hello from the pty"', timeout=5)

    terminal.type("/exit")
    terminal.wait_for("/exit", timeout=5)
    terminal.type("\r")
    status = terminal.wait_exit(timeout=5)
    assert status == 0, f"exit status {status}; screen:\n{terminal.text()[-3000:]}"
    shown = terminal.text()
    assert "Offline model here." in shown
    assert "Traceback" not in shown


def test_a_file_that_is_not_a_database_gets_one_line_and_is_left_alone(launch, tmp_path):
    """The log is opened before the full screen starts: the error is one line on the
    ordinary terminal, the status is 1, and the file is not touched."""
    bad = tmp_path / "notes.db"
    original = b"these are my notes, not a database\n" * 20
    bad.write_bytes(original)
    term = launch(bad)
    status = term.wait_exit(timeout=10)
    shown = term.text()
    assert status == 1, f"exit status {status}; screen:\n{shown[-3000:]}"
    lines = [line for line in shown.splitlines() if line.strip()]
    assert len(lines) == 1, lines
    assert lines[0].startswith("Error: ") and "is not an ikigai database" in lines[0], lines
    assert "Traceback" not in shown
    assert b"\x1b[?1049h" not in term.raw  # never switched to the full screen
    assert bad.read_bytes() == original
