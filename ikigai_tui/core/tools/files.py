"""The file tools: read_file, list_files, search_files, write_file, edit_file.

Each works in the calling agent's workspace (`host.workspace(agent_id)`, a folder the
agent's `cwd` events set) through `Workspace` (core/tools/workspace.py), which keeps every
path inside it: no `..`, no absolute path elsewhere, no symlink that leads out. Text
only: a file with a NUL byte or that is not UTF-8 is refused (read, edit) or skipped
(search). list_files and search_files walk the folders through their descriptors, never
following a link, skip `.git/` and what the .gitignore files ignore
(core/tools/gitignore.py), and cap what they return. The writing tools (`access`
"write", core/tools/file_writes.py) describe what they will do as a unified diff before
they run.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from operator import attrgetter
from typing import Any

from ikigai_tui.core.tools import TURN, ToolContext, ToolResult
from ikigai_tui.core.tools.gitignore import Ignores, glob_regex
from ikigai_tui.core.tools.workspace import Refused, Workspace, read_all

READ_BYTES = 256 * 1024  # read_file's output, at most
READ_LINES = 2_000  # lines read_file returns at most
LINE_CHARS = 2_000  # a longer line is cut (read_file)
FILE_LIMIT = 32 * 1024 * 1024  # read_file and edit_file refuse a bigger file
WRITE_LIMIT = 10 * 1024 * 1024  # write_file's content, at most
LIST_ENTRIES = 1_000
SEARCH_MATCHES = 200
SEARCH_LINE_CHARS = 300
SEARCH_FILE_BYTES = 4 * 1024 * 1024  # search_files skips bigger files
DIFF_LINES = 400  # a longer diff is cut in describe()

_FIRST_READ = 64 * 1024
_SEARCH_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


def _workspace(context: ToolContext) -> Workspace:
    return Workspace(context.host.workspace(context.agent_id))


def _function(name: str, description: str, properties: dict[str, Any],
              required: list[str]) -> dict[str, Any]:
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "properties": properties, "required": required}}}


_PATH = {"type": "string", "description": "relative to the workspace"}


def _text(data: bytes, shown: str) -> str:
    """The file's text, or Refused for a binary file."""
    if b"\x00" in data:
        raise Refused(f"{shown} is a binary file (it holds NUL bytes); only text is read")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise Refused(f"{shown} is not UTF-8 text; only text is read") from None


def _arg(arguments: Any, name: str, kind: type, required: bool = True) -> Any:
    value = arguments.get(name) if isinstance(arguments, dict) else None
    if value is None:
        if required:
            raise Refused(f"the argument '{name}' is missing")
        return None
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise Refused(f"the argument '{name}' must be a {kind.__name__ if kind is not str else 'string'}")
    return value


class _FileTool:
    name = ""
    access = "read"
    callers = frozenset({TURN})

    async def execute(self, context: ToolContext, arguments: Any) -> ToolResult:
        try:
            return ToolResult(self.run(_workspace(context), arguments))
        except Refused as exc:
            return ToolResult(f"Error: {exc}", True)

    def run(self, ws: Workspace, arguments: Any) -> str:
        raise NotImplementedError

    def describe(self, arguments: Any, context: ToolContext | None = None) -> str:
        """What the permission dialog shows: the call as it will run (pure). A writing
        tool shows the unified diff, which needs the workspace: from `context`."""
        if not isinstance(arguments, dict):
            return f"{self.name}: the arguments are not an object"
        shown = ", ".join(f"{k}={v!r}" for k, v in arguments.items())
        return f"{self.name}({shown})"


# -- read_file -------------------------------------------------------------------------


class ReadFileTool(_FileTool):
    name = "read_file"

    def schema(self) -> dict[str, Any]:
        return _function(self.name, (
            "Read a text file with line numbers. Long output is cut (a last line says "
            "where: go on with start_line); binary files are refused."), {
            "path": _PATH,
            "start_line": {"type": "integer", "description": "from 1 (default 1)"},
            "end_line": {"type": "integer", "description": "inclusive (default: the end)"},
        }, ["path"])

    def run(self, ws: Workspace, arguments: Any) -> str:
        data, shown = ws.read_bytes(_arg(arguments, "path", str), FILE_LIMIT)
        text = _text(data, shown)
        start = _arg(arguments, "start_line", int, False) or 1
        end = _arg(arguments, "end_line", int, False)
        lines = text.splitlines()
        total = len(lines)
        if start < 1:
            raise Refused("start_line counts from 1")
        if end is not None and end < start:
            raise Refused(f"end_line ({end}) is before start_line ({start})")
        if total == 0:
            return f"({shown} is empty)"
        if start > total:
            raise Refused(f"{shown} has {total:,} lines; start_line {start} is past its end")
        last = total if end is None else min(end, total)
        out: list[str] = []
        size = 0
        n = start
        while n <= last and n - start < READ_LINES:
            line = lines[n - 1]
            if len(line) > LINE_CHARS:
                line = line[:LINE_CHARS] + f" ... [line cut: {len(line):,} characters]"
            row = f"{n:6}\t{line}"
            size += len(row) + 1
            if size > READ_BYTES and out:
                break
            out.append(row)
            n += 1
        if n - 1 < last or (end is None and n - 1 < total):
            out.append(f"[truncated: lines {start}-{n - 1} of {total:,}; ask for "
                       f"start_line={n} to read on]")
        return "\n".join(out)


# -- walking ---------------------------------------------------------------------------


def _start(glob: str) -> tuple[tuple[str, ...], str]:
    """The folders a glob names before its first wildcard (the walk starts there)."""
    words = [w for w in glob.strip().lstrip("/").split("/") if w not in ("", ".")]
    fixed: list[str] = []
    for word in words[:-1]:
        if any(c in word for c in "*?[\\"):
            break
        fixed.append(word)
    return tuple(fixed), "/".join(fixed)


def _read_ignore(fd: int) -> str | None:
    try:
        gfd = os.open(".gitignore", _SEARCH_FLAGS, dir_fd=fd)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(gfd).st_mode):
            return None
        return read_all(gfd).decode("utf-8", "replace")
    finally:
        os.close(gfd)


def _ignores_above(ws: Workspace, parts: tuple[str, ...]) -> Ignores:
    """The .gitignore rules of the folders from the workspace down to (not including)
    the folder `parts`."""
    ignores = Ignores()
    for n in range(len(parts)):
        with ws.folder(parts[:n], "/".join(parts)) as (fd, _resolved):
            ignores = ignores.below("/".join(parts[:n]), _read_ignore(fd))
    return ignores


def walk(ws: Workspace, glob: str) -> Iterator[tuple[str, int, str]]:
    """(relative path, descriptor of its folder, name) of each file matching `glob`,
    names sorted in each folder; `.git/`, ignored paths and links left out. The
    descriptor is open only until the next item."""
    pattern = glob_regex(glob)
    start, prefix = _start(glob)
    everything = glob.strip() in ("**/*", "**", "*", "")
    ignores = _ignores_above(ws, start)
    for part in range(len(start)):
        if ignores.ignored("/".join(start[:part + 1]), True):
            return
    with ws.folder(start, prefix or ".") as (fd, _resolved):
        yield from _walk_at(fd, prefix, ignores, None if everything else pattern.match)


_name = attrgetter("name")


def _walk_at(fd: int, prefix: str, ignores: Ignores, match) -> Iterator[tuple[str, int, str]]:
    ignores = ignores.below(prefix, _read_ignore(fd))
    check = ignores.ignored if ignores.files else None
    with os.scandir(fd) as it:
        entries = sorted(it, key=_name)
    for entry in entries:
        name = entry.name
        rel = f"{prefix}/{name}" if prefix else name
        try:
            if entry.is_dir(follow_symlinks=False):
                if name == ".git" or (check is not None and check(rel, True)):
                    continue
                try:
                    sub = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
                except OSError:
                    continue
                try:
                    yield from _walk_at(sub, rel, ignores, match)
                finally:
                    os.close(sub)
            elif entry.is_file(follow_symlinks=False):
                if (match is None or match(rel)) and (check is None or not check(rel, False)):
                    yield rel, fd, name
        except OSError:
            continue


def _glob(arguments: Any) -> str:
    glob = _arg(arguments, "glob", str, False) or "**/*"
    if ".." in glob.split("/"):
        raise Refused(f"the glob {glob} uses '..': globs are relative to the workspace")
    if glob.startswith("/"):
        raise Refused(f"the glob {glob} is absolute: globs are relative to the workspace")
    return glob


_GLOB = {"type": "string", "description": "like **/*.py or src/** (without /: names at any "
         "depth); default **/*"}


# -- list_files ------------------------------------------------------------------------


class ListFilesTool(_FileTool):
    name = "list_files"

    def schema(self) -> dict[str, Any]:
        return _function(self.name, (
            "List files matching a glob, sorted; .gitignore'd files and .git/ left out; "
            f"at most {LIST_ENTRIES:,}."),
            {"glob": _GLOB}, [])

    def run(self, ws: Workspace, arguments: Any) -> str:
        glob = _glob(arguments)
        found = sorted(rel for rel, _fd, _name in walk(ws, glob))
        if not found:
            return f"No files match {glob}."
        out = found[:LIST_ENTRIES]
        if len(found) > LIST_ENTRIES:
            out.append(f"[{len(found) - LIST_ENTRIES:,} more; narrow the glob]")
        return "\n".join(out)


# -- search_files ----------------------------------------------------------------------


class SearchFilesTool(_FileTool):
    name = "search_files"

    def schema(self) -> dict[str, Any]:
        return _function(self.name, (
            "Search text files for a Python regular expression, line by line: prints "
            "path:line:text (binary, .gitignore'd and .git/ files skipped; at most "
            f"{SEARCH_MATCHES} matches)."), {
            "pattern": {"type": "string"},
            "glob": _GLOB,
            "ignore_case": {"type": "boolean"},
        }, ["pattern"])

    def run(self, ws: Workspace, arguments: Any) -> str:
        text = _arg(arguments, "pattern", str)
        glob = _glob(arguments)
        flags = re.MULTILINE | (re.IGNORECASE if arguments.get("ignore_case") is True else 0)
        try:
            pattern = re.compile(text, flags)
        except re.error as exc:
            raise Refused(f"the pattern is not a valid regular expression: {exc}") from None
        out, more = search(ws, pattern, glob)
        if not out:
            return f"No matches for {text!r} in {glob}."
        if more:
            out.append(f"[stopped at {SEARCH_MATCHES} matches; narrow the pattern or the glob]")
        return "\n".join(out)


def search(ws: Workspace, pattern: re.Pattern[str], glob: str,
           limit: int | None = None) -> tuple[list[str], bool]:
    """The matching lines as path:line:text (at most `limit`: SEARCH_MATCHES), and whether
    more were left. Each file is read once; a file without a match costs one search of
    its text."""
    limit = SEARCH_MATCHES if limit is None else limit
    out: list[str] = []
    find = pattern.search
    for rel, fd, name in walk(ws, glob):
        try:
            ffd = os.open(name, _SEARCH_FLAGS, dir_fd=fd)
        except OSError:
            continue
        try:
            # Most files take one read (the walk saw a regular file; O_NONBLOCK: a fifo
            # swapped in since reads nothing); a bigger one is checked, then read whole.
            data = os.read(ffd, _FIRST_READ)
            if len(data) == _FIRST_READ:
                st = os.fstat(ffd)
                if not stat.S_ISREG(st.st_mode) or st.st_size > SEARCH_FILE_BYTES:
                    continue
                data += read_all(ffd)
        except OSError:
            continue
        finally:
            os.close(ffd)
        if b"\x00" in data:
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        found = find(text)
        if found is None:
            continue
        line_no, counted = 1, 0
        while found is not None:
            at = found.start()
            begin = text.rfind("\n", 0, at) + 1
            end = text.find("\n", at)
            if end < 0:
                end = len(text)
            line_no += text.count("\n", counted, begin)
            counted = begin
            line = text[begin:end]
            if len(line) > SEARCH_LINE_CHARS:
                line = line[:SEARCH_LINE_CHARS] + " ..."
            if len(out) == limit:
                return out, True
            out.append(f"{rel}:{line_no}:{line}")
            if end >= len(text):
                break
            found = find(text, end + 1)
    return out, False


# -- write_file and edit_file ----------------------------------------------------------
