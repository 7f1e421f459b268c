"""The real program in a pseudo-terminal, for tests: a `Terminal` (the master side: what
the program drew, the keys to type) and `launch`, which starts `python -m ikigai_tui`."""

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
from pathlib import Path

import pytest

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
        self.master_closed = False

    def hang_up(self) -> None:
        """Close the master side, as a terminal emulator does when its window closes."""
        os.close(self.fd)
        self.master_closed = self.closed = True

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

    def start(db, env_extra: dict[str, str] | None = None) -> Terminal:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
        env = dict(os.environ)
        for name in ("NO_COLOR", "TEXTUAL_THEME", "TEXTUAL", "COLORTERM"):
            env.pop(name, None)
        env.update(TERM="xterm-256color", COLUMNS=str(COLS), LINES=str(ROWS))
        env.update(env_extra or {})
        # The checkout under test, not whichever ikigai_tui is installed (a worktree).
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(Path(__file__).resolve().parents[2]), env.get("PYTHONPATH")) if p)
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
        if not term.master_closed:
            os.close(term.fd)
