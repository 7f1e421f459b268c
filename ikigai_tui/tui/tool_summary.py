"""A tool call folded to one line of the scrollback: the tool's name, the argument that
matters (a path, a glob, a pattern, a command's first line) and, once its result is in,
how it ended (a command's exit status, an error, stopped by the user) and its size.

Only the start of a huge argument or result is parsed or scanned for its words: a
10 MB file written costs what a short one does (the result's size is counted, in C).
"""

from __future__ import annotations

import json
import re
from typing import NamedTuple

from ikigai_tui.core.tools.running import STOPPED
from ikigai_tui.tui.transcript import Item

# The argument that says what a call did, for the tools that have one; another tool
# (an MCP server's, the program's own) shows its first string argument.
KEY_ARGUMENT = {"read_file": "path", "write_file": "path", "edit_file": "path",
                "list_files": "glob", "search_files": "pattern", "bash": "command"}
PARSED = 64_000  # arguments longer than this are looked at by their start only
_BASH_END = re.compile(r"exit status (-?\d+)|killed .*")  # a command's last line (bash.py)


def key_argument(name: str, arguments: str) -> str:
    """The argument that matters, on one line ("…" where a second line was cut off)."""
    value = _value(name, arguments)
    if name == "list_files" and not value:
        value = "**/*"
    first, _, rest = value.strip().partition("\n")
    return first + ("…" if rest.strip() else "")


def _value(name: str, arguments: str) -> str:
    key = KEY_ARGUMENT.get(name)
    if len(arguments) <= PARSED:
        try:
            args = json.loads(arguments or "{}")
        except ValueError:
            args = None
        if isinstance(args, dict):
            if key is not None:
                value = args.get(key)
                return value if isinstance(value, str) else ""
            return next((v for v in args.values() if isinstance(v, str)), "")
    # A huge call (a file written whole): its key, when it comes early, read from the start.
    pattern = rf'"{re.escape(key)}"\s*:\s*' if key else r'"[^"\\]*"\s*:\s*'
    found = re.search(pattern + r'"((?:[^"\\]|\\.)*)"', arguments[:PARSED])
    if found is None:
        return ""
    try:
        return json.loads(f'"{found.group(1)}"')
    except ValueError:
        return found.group(1)


class Outcome(NamedTuple):
    status: str  # "exit 0", "killed after 30 s (timeout)", "stopped", "error: ...", or ""
    failed: bool  # drawn as an error
    size: str  # "12 lines · 3.4K chars" ("" for an error's message)


def outcome(result: Item, name: str | None) -> Outcome:
    """How the call ended and how much it returned. `name`: the call's tool (None when
    the call is not at hand: a command's status line is still recognised)."""
    text = result.text
    failed = bool(result.meta.get("error"))
    stopped = bool(result.meta.get("interrupted"))
    status = ""
    if stopped:
        text = text.removesuffix(STOPPED)
        status = "stopped"
    elif name in ("bash", None) and (end := _last_line(text, _BASH_END)):
        text = text[: len(text) - len(end.group(0))]
        status = f"exit {end.group(1)}" if end.group(1) is not None else end.group(0)
    elif failed:
        first = text[:400].strip().partition("\n")[0]
        return Outcome("error: " + first.removeprefix("Error: ") if first else "error", True, "")
    return Outcome(status, failed, _size(text))


def _last_line(text: str, pattern: re.Pattern) -> re.Match | None:
    tail = text[-300:]
    cut = tail.rfind("\n")
    if cut < 0 and len(tail) < len(text):
        return None  # a last line longer than the tail: no status line
    return pattern.fullmatch(tail, cut + 1)


def _size(text: str) -> str:
    lines = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
    chars = len(text)
    shown = f"{chars} chars" if chars < 1000 else f"{chars / 1000:.1f}K chars"
    return f"{lines:,} line{'' if lines == 1 else 's'} · {shown}"
