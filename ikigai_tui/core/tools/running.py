"""What the turn's tool loop (core/turns.py) and the tools share about running calls:
the settings, the partial output of a call stopped by the user, and which calls must not
run at the same time (two writes of one file, the program's own commands)."""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any, NamedTuple

STOPPED = "[stopped by the user]"


class ToolSettings(NamedTuple):
    """The tool rounds a turn may run (then it stops with a clear line), the longest a
    `bash` command may run, and the withheld environment variables the tools' child
    processes may still get (support/secrets.py says which are withheld)."""

    max_tool_rounds: int = 25
    bash_max_timeout: float = 600.0
    env_pass: tuple[str, ...] = ()


class ToolInterrupted(asyncio.CancelledError):
    """A tool call cancelled (Esc, /kill) that keeps what it had produced so far: still a
    cancellation wherever it is not expected, its `output` the tool result the turn
    commits, flagged interrupted."""

    def __init__(self, output: str) -> None:
        super().__init__(output)
        self.output = output


CONCURRENT = frozenset({"read", "shell", "mcp"})  # accesses whose calls run at once


def order_key(tool: Any, arguments: str) -> str | None:
    """What a call must wait its turn for, or None when it may run at once with the
    others: calls with one key run one after the other, in the reply's order. A write
    waits for the earlier writes of its file (every spelling of the path one key); the
    program's own tools (access "ikigai": slash, filter_context, memory) wait for each
    other, as each may change what the next one sees."""
    if tool is None:
        return None
    access = getattr(tool, "access", "ikigai")
    if access in CONCURRENT:
        return None
    if access != "write":
        return "ikigai"
    try:
        args = json.loads(arguments or "{}")
    except json.JSONDecodeError:
        return None
    path = args.get("path") if isinstance(args, dict) else None
    return "file:" + os.path.normpath(path) if isinstance(path, str) and path else None
