"""`ikigai -p` in a real terminal (issue 16, item 4): each output format, read from the
pty as a person or a program driving a terminal would see it; stream-json validated line
by line against the schema; Ctrl-C mid-reply keeps the reply (flagged interrupted) and
exits 130."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from tests.integration.stream_schema import JSON_RESULT, validate, validate_line
from tests.tui.pty_harness import Terminal

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX ptys")
REPO = Path(__file__).resolve().parents[2]


def _controlling_tty() -> None:
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


@pytest.fixture
def ask_in_pty(tmp_path):
    started: list[Terminal] = []

    def start(*args: str, env_extra: dict | None = None) -> Terminal:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        # No output post-processing (ONLCR): the bytes read are the bytes written.
        attrs = termios.tcgetattr(slave)
        attrs[1] &= ~termios.OPOST
        termios.tcsetattr(slave, termios.TCSANOW, attrs)
        env = dict(os.environ, TERM="xterm-256color", **(env_extra or {}))
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
        proc = subprocess.Popen([sys.executable, "-m", "ikigai_tui", "--db", str(tmp_path / "a.db"),
                                 *args], stdin=slave, stdout=slave, stderr=slave, env=env,
                                cwd=tmp_path, start_new_session=True,
                                preexec_fn=_controlling_tty, close_fds=True)
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


def _output(term: Terminal) -> str:
    assert term.wait_exit(60) == 0, term.text()
    return bytes(term.raw).decode("utf-8")


def test_text_in_a_terminal(ask_in_pty):
    shown = _output(ask_in_pty("-p", "hello from a terminal"))
    assert shown.startswith('Offline model here. You said: "hello from a terminal".')
    assert shown.endswith("\n") and shown.count("\n") == 1
    assert "\x1b" not in shown  # no escape sequences: plain text


def test_json_in_a_terminal(ask_in_pty):
    shown = _output(ask_in_pty("-p", "hello", "--output-format", "json"))
    result = json.loads(shown)
    assert validate(result, JSON_RESULT) == []
    assert result["subtype"] == "success" and result["result"].startswith("Offline model here.")


def test_stream_json_in_a_terminal_line_by_line(ask_in_pty):
    shown = _output(ask_in_pty("-p", "a \x1b]52;c;aGk=\x07 trap", "--output-format", "stream-json"))
    lines = shown.splitlines()
    assert len(lines) > 5
    for number, line in enumerate(lines, 1):
        obj = json.loads(line)
        assert validate_line(obj) == [], (number, line)
    objects = [json.loads(line) for line in lines]
    assert [o["type"] for o in objects][:2] == ["system", "user"]
    assert objects[-1]["type"] == "result" and objects[-1]["exit_code"] == 0
    assert objects[1]["content"] == "a \x1b]52;c;aGk=\x07 trap"  # exact, once decoded
    assert "\x1b" not in shown and "\x07" not in shown  # and inert on the terminal


def test_ctrl_c_mid_reply_exits_130_keeping_the_reply(ask_in_pty, ikigai, tmp_path):
    term = ask_in_pty("-p", "tell me a long story about plums", "--output-format", "stream-json",
                      env_extra={"IKIGAI_OFFLINE_DELAY": "0.15"})
    term.wait_for('"text_delta"', timeout=30)
    term.type("\x03")
    assert term.wait_exit(30) == 130, term.text()
    # The terminal echoes the Ctrl-C as "^C" in the middle of the output.
    lines = bytes(term.raw).decode().replace("^C", "").splitlines()
    objects = [json.loads(line) for line in lines if line]
    assert all(validate_line(o) == [] for o in objects)
    final = objects[-1]
    assert final["type"] == "result" and final["subtype"] == "interrupted"
    assert final["exit_code"] == 130 and final["is_error"] is True
    reply = [o for o in objects if o["type"] == "assistant"]
    assert len(reply) == 1 and reply[0]["interrupted"] is True and reply[0]["content"]
    ctx = json.loads(ikigai("--db", str(tmp_path / "a.db"), "context", "--json").stdout)
    assert ctx["messages"][-1].get("interrupted") is True


def test_sigterm_mid_reply_exits_143_keeping_the_reply(tmp_path):
    env = dict(os.environ, IKIGAI_OFFLINE_DELAY="0.15")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    proc = subprocess.Popen([sys.executable, "-m", "ikigai_tui", "--db", str(tmp_path / "t.db"),
                             "-p", "tell me a long story", "--output-format", "stream-json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    for line in proc.stdout:
        if '"text_delta"' in line:
            break
    proc.send_signal(signal.SIGTERM)
    rest, _err = proc.communicate(timeout=30)
    assert proc.returncode == 143
    objects = [json.loads(line) for line in rest.splitlines()]
    assert all(validate_line(o) == [] for o in objects)
    assert objects[-1]["subtype"] == "interrupted" and objects[-1]["exit_code"] == 143
    assert [o["interrupted"] for o in objects if o["type"] == "assistant"] == [True]
