"""Long prompts (issue 16, item 3): the input through $VISUAL / $EDITOR and back (a fake
editor script stands in for the user's), and the input's history of each agent read
back from the log after a restart."""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from pathlib import Path

import pytest

from ikigai_tui.tui.editor import EditorError, edit_text, editor_command
from ikigai_tui.tui.history import typed_history

from .conftest import agent_named, events_of, idle, root_id, say, settle, type_text

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="shell scripts as editors")


def fake_editor(folder: Path, body: str, name: str = "fake-editor") -> Path:
    """An executable shell script called as `editor FILE`."""
    script = folder / name
    script.write_text("#!/bin/sh\n" + body + "\n", encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


# ---- the round trip ----------------------------------------------------------------------


def test_the_editor_gets_the_text_and_its_edit_comes_back(tmp_path):
    # Appends a line, as a user would, and keeps a copy of what it was given.
    editor = fake_editor(tmp_path, f'cp "$1" "{tmp_path}/given"\nprintf "and a second line\\n" >> "$1"')
    edited = edit_text("first line\n", [str(editor)])
    assert (tmp_path / "given").read_text() == "first line\n"
    assert edited == "first line\nand a second line"  # the editor's final newline dropped
    leftovers = [p for p in Path(os.environ.get("TMPDIR", "/tmp")).glob("ikigai-prompt-*")
                 if p.stat().st_mtime > (tmp_path / "given").stat().st_mtime - 1]
    assert leftovers == []  # the temporary file is removed


def test_an_editor_that_fails_or_is_missing_changes_nothing(tmp_path):
    failing = fake_editor(tmp_path, 'printf "half" > "$1"\nexit 3')
    with pytest.raises(EditorError, match="exited with status 3; the input is unchanged"):
        edit_text("keep me", [str(failing)])
    with pytest.raises(EditorError, match="editor not found: /no/such/editor"):
        edit_text("keep me", ["/no/such/editor"])


def test_the_editor_command_is_visual_then_editor_then_vi():
    assert editor_command({"VISUAL": "code --wait", "EDITOR": "nano"}) == ["code", "--wait"]
    assert editor_command({"VISUAL": " ", "EDITOR": "nano -R"}) == ["nano", "-R"]
    assert editor_command({}) == ["vi"]
    with pytest.raises(EditorError, match="cannot read the editor command"):
        editor_command({"EDITOR": "vim 'unclosed"})


# ---- in the app ----------------------------------------------------------------------------


@contextlib.contextmanager
def _no_terminal_to_hand_over():
    yield


async def test_ctrl_g_edits_the_input_in_the_editor_and_the_text_comes_back(bench, monkeypatch):
    """Pilot's headless driver cannot suspend (test_editor_pty.py does it in a real
    terminal): the suspension is replaced, the rest is the app's own path."""
    editor = fake_editor(bench.tmp_path, 'printf "a long prompt\\nwritten in the editor\\n" > "$1"')
    monkeypatch.setenv("VISUAL", str(editor))
    app = bench.app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        monkeypatch.setattr(app, "suspend", _no_terminal_to_hand_over)
        await type_text(pilot, "draft")
        await pilot.press("ctrl+g")
        await idle(pilot)
        assert app.prompt_input.text == "a long prompt\nwritten in the editor"
        assert app.prompt_input.cursor_location == (1, len("written in the editor"))
        await pilot.press("enter")
        await idle(pilot)
        users = await events_of(app, app.focused_agent, "user")
        assert [e.payload["content"] for e in users] == ["a long prompt\nwritten in the editor"]


async def test_ctrl_g_does_not_run_the_editor_over_a_dialog(bench, monkeypatch):
    ran = bench.tmp_path / "ran"
    monkeypatch.setenv("VISUAL", str(fake_editor(bench.tmp_path, f'touch "{ran}"')))
    app = bench.app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        monkeypatch.setattr(app, "suspend", _no_terminal_to_hand_over)
        await pilot.press("f1")
        await idle(pilot)
        assert app.screen is not app.screen_stack[0]
        assert not app.check_action("editor", ())
        await pilot.press("ctrl+g")
        await idle(pilot)
        assert not ran.exists()
        await pilot.press("escape")
        await idle(pilot)
        await pilot.press("ctrl+g")
        await idle(pilot)
        assert ran.exists()


async def test_a_failing_editor_leaves_the_input_and_says_why(bench, monkeypatch):
    monkeypatch.setenv("VISUAL", str(fake_editor(bench.tmp_path, "exit 1")))
    app = bench.app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        monkeypatch.setattr(app, "suspend", _no_terminal_to_hand_over)
        await type_text(pilot, "draft")
        await pilot.press("ctrl+g")
        await idle(pilot)
        assert app.prompt_input.text == "draft"
        shown = " ".join(s.text.strip() for s in app.panes.active.scrollback._lines)
        assert "Error: the editor fake-editor exited with status 1" in shown


# ---- history from the log ----------------------------------------------------------------


async def _history_steps(session) -> None:
    root = root_id(session)
    await say(session, root, "first question")
    await session.command(root, "/mark alpha")
    await say(session, root, "/usr/bin/python is broken")  # typed as //usr/bin/python ...
    await say(session, root, "second question")
    await session.command(root, "/fork --name kid")
    kid = agent_named(session, "kid")
    await say(session, kid, "the kid's own question")
    await session.command(kid, "/send root a mail, not typed at the root")
    await session.wait_idle()


async def test_up_recalls_this_agents_messages_from_the_log_after_a_restart(bench):
    async with bench.prep() as session:
        await _history_steps(session)
    app = bench.app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        recalled = []
        for _ in range(6):
            await pilot.press("up")
            recalled.append(app.prompt_input.text)
        assert recalled == ["/fork --name kid", "second question", "//usr/bin/python is broken",
                            "/mark alpha", "first question", "first question"]  # oldest: stays
        for _ in range(5):
            await pilot.press("down")
        assert app.prompt_input.text == ""  # back to the (empty) draft

        await app.focus_agent(agent_named(app.session, "kid"))
        await idle(pilot)
        await pilot.press("up")
        assert app.prompt_input.text == "/send root a mail, not typed at the root"
        await pilot.press("up")
        assert app.prompt_input.text == "the kid's own question"

        # What is sent now joins that agent's history, and the root's is its own again.
        app.prompt_input.text = ""
        await type_text(pilot, "kid again")
        await pilot.press("enter")
        await idle(pilot)
        await app.focus_agent(root_id(app.session))
        await idle(pilot)
        await pilot.press("up")
        assert app.prompt_input.text == "/fork --name kid"


async def test_typed_history_leaves_out_mail_and_the_llms_commands(session):
    root = root_id(session)
    await say(session, root, "hello")
    await session.command(root, "/mark m1", source="llm")
    await session.command(root, "/fork --name other")
    other = agent_named(session, "other")
    await session.command(other, "/send root ping")
    await session.wait_idle()
    assert await typed_history(session, root) == ["hello", "/fork --name other"]
