"""Notices when a background agent needs you (issue 27 item 1), in a real terminal: the
program in a pty, a child forked with a prompt answering where no pane shows it. With
`bell = true` and `notify = "auto"` in a terminal known to show OSC 777 (WezTerm), the
output holds the bell and the notification; in one that is not known (Terminal.app),
with the bell off, it holds neither: nothing is written where it is not supported."""

from __future__ import annotations

import re
import sys

import pytest

from .pty_harness import launch  # noqa: F401  (a fixture)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pty")

OSC = re.compile(rb"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")  # whole OSC strings


def _run(launch, tmp_path, *, bell: bool, program: str) -> bytes:
    config = tmp_path / "config.toml"
    config.write_text(f'bell = {"true" if bell else "false"}\nnotify = "auto"\n', encoding="utf-8")
    env = {"IKIGAI_CONFIG": str(config), "TERM_PROGRAM": program, "TMUX": "", "VTE_VERSION": ""}
    terminal = launch(tmp_path / "notify.db", env)
    terminal.wait_for("offline model, no network", "Send", timeout=15)
    terminal.type("/fork --name helper look into plums")
    terminal.wait_for("look into plums", timeout=5)
    terminal.type("\r")
    terminal.wait_for("finished its turn", timeout=20)  # the toast
    terminal.type("/exit\r")
    assert terminal.wait_exit(timeout=10) == 0, terminal.text()[-2000:]
    return bytes(terminal.raw)


def test_a_known_terminal_gets_the_bell_and_the_desktop_notification(launch, tmp_path):
    raw = _run(launch, tmp_path, bell=True, program="WezTerm")
    found = re.search(rb"\x1b\]777;notify;ikigai;helper \([0-9a-f]{6}\) finished its turn\x07", raw)
    assert found, raw[-3000:]
    assert b"\x07" in OSC.sub(b"", raw)  # the bell, outside any OSC string


def test_an_unknown_terminal_gets_neither(launch, tmp_path):
    raw = _run(launch, tmp_path, bell=False, program="Apple_Terminal")
    assert b"\x1b]777;" not in raw and b"\x1b]9;" not in raw
    assert b"\x07" not in OSC.sub(b"", raw)
