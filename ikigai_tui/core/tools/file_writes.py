"""The writing file tools, write_file and edit_file (`access` "write"): each describes
what it will do as a unified diff before it runs (the permission dialog shows it), then
writes through a temporary file and a rename inside the agent's workspace (the reading
tools and what both share: core/tools/files.py)."""

from __future__ import annotations

import difflib
from typing import Any

from ikigai_tui.core.tools import ToolContext
from ikigai_tui.core.tools.files import (
    DIFF_LINES, FILE_LIMIT, WRITE_LIMIT, _arg, _FileTool, _function, _PATH, _text, _workspace,
)
from ikigai_tui.core.tools.workspace import Missing, Refused, Workspace


def _current(ws: Workspace, path: str) -> tuple[str | None, str]:
    """The file's text now (None: no such file) and its path as shown."""
    try:
        data, shown = ws.read_bytes(path, FILE_LIMIT)
    except Missing:
        return None, ws.shown(ws.parts(path))
    return _text(data, shown), shown


def unified_diff(old: str, new: str, shown: str) -> str:
    lines = list(difflib.unified_diff(old.splitlines(keepends=True),
                                      new.splitlines(keepends=True),
                                      f"a/{shown}", f"b/{shown}"))
    lines = [line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
             for line in lines]
    if len(lines) > DIFF_LINES:
        cut = len(lines) - DIFF_LINES
        lines = lines[:DIFF_LINES] + [f"[{cut:,} more diff lines]\n"]
    return "".join(lines).rstrip("\n")


class _WriteTool(_FileTool):
    access = "write"

    def plan(self, ws: Workspace, arguments: Any) -> tuple[str, str | None, str]:
        """(path as shown, the current text or None, the new text); Refused if it cannot
        be done. Pure: reads only."""
        raise NotImplementedError

    def describe_plan(self, shown: str, old: str | None, new: str) -> str:
        return unified_diff(old or "", new, shown)

    def describe(self, arguments: Any, context: ToolContext | None = None) -> str:
        if context is None:
            return (f"{super().describe(arguments)}\n(no workspace given: the diff "
                    "cannot be shown)")
        try:
            shown, old, new = self.plan(_workspace(context), arguments)
        except Refused as exc:
            return f"{self.name}: {exc}"
        return self.describe_plan(shown, old, new)

    def run(self, ws: Workspace, arguments: Any) -> str:
        shown, old, new = self.plan(ws, arguments)
        ws.write(shown, new.encode("utf-8"))
        return self.done(shown, old, new)

    def done(self, shown: str, old: str | None, new: str) -> str:
        raise NotImplementedError


class WriteFileTool(_WriteTool):
    name = "write_file"

    def schema(self) -> dict[str, Any]:
        return _function(self.name, (
            "Create or overwrite a text file (its folders are made). To change part of a "
            "file, use edit_file."), {
            "path": _PATH,
            "content": {"type": "string"},
        }, ["path", "content"])

    def plan(self, ws: Workspace, arguments: Any) -> tuple[str, str | None, str]:
        path = _arg(arguments, "path", str)
        content = _arg(arguments, "content", str)
        if len(content.encode("utf-8")) > WRITE_LIMIT:
            raise Refused(f"the content is over {WRITE_LIMIT:,} bytes")
        old, shown = _current(ws, path)
        return shown, old, content

    def describe_plan(self, shown: str, old: str | None, new: str) -> str:
        size = len(new.encode("utf-8"))
        what = ("a new file" if old is None else
                f"replacing {len(old.encode('utf-8')):,} bytes")
        head = f"Write {shown}: {size:,} bytes ({what})"
        return head + "\n" + super().describe_plan(shown, old, new)

    def done(self, shown: str, old: str | None, new: str) -> str:
        lines = new.count("\n") + (0 if new.endswith("\n") or not new else 1)
        verb = "Created" if old is None else "Wrote"
        return f"{verb} {shown} ({len(new.encode('utf-8')):,} bytes, {lines:,} lines)."


class EditFileTool(_WriteTool):
    name = "edit_file"

    def schema(self) -> dict[str, Any]:
        return _function(self.name, (
            "Replace old_text by new_text in a file. old_text must appear exactly once, "
            "whitespace included (add surrounding lines to make it unique); otherwise "
            "nothing changes."), {
            "path": _PATH,
            "old_text": {"type": "string"},
            "new_text": {"type": "string"},
        }, ["path", "old_text", "new_text"])

    def plan(self, ws: Workspace, arguments: Any) -> tuple[str, str | None, str]:
        path = _arg(arguments, "path", str)
        old_text = _arg(arguments, "old_text", str)
        new_text = _arg(arguments, "new_text", str)
        if not old_text:
            raise Refused("old_text is empty: give the exact text to replace")
        old, shown = _current(ws, path)
        if old is None:
            raise Refused(f"{shown} does not exist (write_file creates files)")
        count = old.count(old_text)
        if count == 0:
            raise Refused(f"old_text was not found in {shown}: nothing changed (copy it "
                          "exactly, whitespace included; read_file shows the file)")
        if count > 1:
            raise Refused(f"old_text was found {count} times in {shown}: nothing changed "
                          "(include more surrounding text so it appears exactly once)")
        if old_text == new_text:
            raise Refused("old_text and new_text are the same: nothing to change")
        return shown, old, old.replace(old_text, new_text, 1)

    def done(self, shown: str, old: str | None, new: str) -> str:
        assert old is not None
        first = next((i for i, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new)))
        line = old.count("\n", 0, first) + 1
        return f"Edited {shown}: 1 replacement at line {line}."
