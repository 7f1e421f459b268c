"""The real program in a pseudo-terminal: Ctrl+G hands the terminal to $VISUAL (a fake
editor script that checks it was given a terminal in its ordinary mode), the full screen
comes back with the edited text in the input; and a bad theme or keymap in the config is
one `Error:` line before the full screen starts."""

from __future__ import annotations

import stat
import sys

import pytest

from .pty_harness import launch  # noqa: F401  (a fixture)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pty")

ALT_SCREEN_OFF = b"\x1b[?1049l"


def test_ctrl_g_suspends_for_the_editor_and_resumes_with_its_text(launch, tmp_path):
    given = tmp_path / "given.txt"
    editor = tmp_path / "fake-editor"
    # The editor sees a terminal (stdin and stdout are ttys, as vi needs) in cooked mode
    # (the app gave the terminal back), records the draft it was given, writes its edit.
    editor.write_text(
        "#!/bin/sh\n"
        f'cp "$1" "{given}"\n'
        f'if test -t 0 && test -t 1; then echo tty > "{tmp_path}/seen"; fi\n'
        f'stty -a | grep -o -- "-\\?icanon" >> "{tmp_path}/seen"\n'
        'printf "edited in a real editor\\n" > "$1"\n', encoding="utf-8")
    editor.chmod(editor.stat().st_mode | stat.S_IXUSR)
    term = launch(tmp_path / "pty.db", {"VISUAL": str(editor), "EDITOR": "false"})
    term.wait_for("offline model, no network", "Sent:", timeout=10)
    term.type("my draft")
    term.wait_for("my draft", timeout=5)
    drawn_before = len(term.raw)
    term.type("\x07")  # Ctrl+G
    term.wait_for("edited in a real editor", timeout=10)
    assert given.read_text() == "my draft"
    assert (tmp_path / "seen").read_text().split() == ["tty", "icanon"]
    assert ALT_SCREEN_OFF in term.raw[drawn_before:]  # the full screen was left, then back
    term.type("\r")
    term.wait_for('You said: "edited in a real editor"', timeout=5)
    term.type("/exit\r")
    status = term.wait_exit(timeout=5)
    assert status == 0, term.text()[-3000:]
    assert "Traceback" not in term.text()


@pytest.mark.parametrize(("config", "expected"), [
    ('theme = "nord-ish"\n', "line 1: unknown theme 'nord-ish'"),
    ('model = "offline"\n\n[keymap]\nhelp = "f2"\n',
     "line 4: keymap 'help' puts f2 on 'help' (Help), but in the main screen f2 is already "
     "'split' (Split)"),
], ids=["theme", "keymap"])
def test_a_bad_theme_or_keymap_is_one_line_before_the_full_screen(launch, tmp_path, config,
                                                                  expected):
    path = tmp_path / "config.toml"
    path.write_text(config, encoding="utf-8")
    db = tmp_path / "never.db"
    term = launch(db, {"IKIGAI_CONFIG": str(path)})
    status = term.wait_exit(timeout=10)
    shown = term.text()
    lines = [line for line in shown.splitlines() if line.strip()]
    assert status == 2, shown[-3000:]
    assert len(lines) == 1 and lines[0].startswith(f"Error: {path}, {expected}"), lines
    assert b"\x1b[?1049h" not in term.raw  # never switched to the full screen
    assert not db.exists()
