"""Long prompts in the user's editor: `$VISUAL`, else `$EDITOR`, else `vi`, on a
temporary copy of the input, the full screen suspended meanwhile (`App.suspend`).

`edit_text` is the round trip alone (write, run, read back), testable with any command;
`EditorAction` is the app's key for it (Ctrl+G by default, id `editor`).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

__all__ = ["EditorError", "editor_command", "edit_text", "EditorAction"]

SUFFIX = ".md"  # editors colour it as Markdown, which replies are written in


class EditorError(Exception):
    """The editor could not be run, or failed: the input is left as it was."""


def editor_command(env: Mapping[str, str] | None = None) -> list[str]:
    """The editor's command line: $VISUAL, then $EDITOR (either may hold arguments, as
    `code --wait`), then vi."""
    env = os.environ if env is None else env
    raw = (env.get("VISUAL") or "").strip() or (env.get("EDITOR") or "").strip() or "vi"
    try:
        words = shlex.split(raw)
    except ValueError as exc:
        raise EditorError(f"cannot read the editor command {raw!r}: {exc}") from None
    if not words:
        raise EditorError("the editor command is empty (set $VISUAL or $EDITOR)")
    return words


def edit_text(text: str, command: list[str], *,
              run: Callable[..., subprocess.CompletedProcess] = subprocess.run) -> str:
    """`text` after the editor `command` has edited it in a file (the path is its last
    argument). One final newline, which editors add, is dropped. Raises EditorError."""
    fd, name = tempfile.mkstemp(prefix="ikigai-prompt-", suffix=SUFFIX)
    path = Path(name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as file:
            file.write(text)
        try:
            done = run([*command, str(path)])
        except FileNotFoundError:
            raise EditorError(f"editor not found: {command[0]} (set $VISUAL or $EDITOR)") from None
        except OSError as exc:
            raise EditorError(f"cannot run the editor {command[0]}: {exc.strerror}") from None
        if done.returncode != 0:
            raise EditorError(f"the editor {Path(command[0]).name} exited with status {done.returncode}; "
                              "the input is unchanged")
        try:
            edited = path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise EditorError(f"cannot read the edited text back: {exc.strerror}") from None
    finally:
        path.unlink(missing_ok=True)
    edited = edited.replace("\r\n", "\n")
    return edited[:-1] if edited.endswith("\n") else edited


class EditorAction:
    """The app's `editor` action: the input's text through the editor and back."""

    def action_editor(self) -> None:
        from textual.app import SuspendNotSupported

        app = self  # an IkigaiApp
        prompt = app.prompt_input  # type: ignore[attr-defined]
        if app.screen is not app.screen_stack[0] or prompt.read_only:  # type: ignore[attr-defined]
            return
        try:
            command = editor_command()
            with app.suspend():  # type: ignore[attr-defined]
                edited = edit_text(prompt.text, command)
        except EditorError as exc:
            app.note("error", f"Error: {exc}")  # type: ignore[attr-defined]
            return
        except SuspendNotSupported:
            app.note("error", "Error: this terminal cannot hand the screen to an editor")  # type: ignore[attr-defined]
            return
        prompt.put_text(edited)
        prompt.focus()
