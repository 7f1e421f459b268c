"""Small fake tools for the permission tests (issue 25 item 3): a `shell`-access tool
that records what it ran, and a `write`-access one that writes a real file, registered
beside the program's own tools in a test registry (the real bash and file tools come
from their own modules)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ikigai_tui.core import tools
from ikigai_tui.core.tools import TURN, ToolContext, ToolRegistry, ToolResult


class Shell:
    """`run` a command: it records the command instead of running it."""

    name = "run"
    callers = frozenset({TURN})
    access = "shell"

    def __init__(self) -> None:
        self.ran: list[tuple[str, str]] = []  # (agent id, command)

    def schema(self) -> dict[str, Any]:
        return {"type": "function", "function": {
            "name": self.name, "description": "Run a shell command.",
            "parameters": {"type": "object", "required": ["command"],
                           "properties": {"command": {"type": "string"}}}}}

    def describe(self, arguments: Any, context: ToolContext | None = None) -> str:
        return f"$ {arguments.get('command')}\n(in /work/project)"

    async def execute(self, context: ToolContext, arguments: Any) -> ToolResult:
        self.ran.append((context.agent_id, arguments["command"]))
        return ToolResult(f"ran: {arguments['command']}")


class Write:
    """`write` a file under `folder`; describes the change as a diff."""

    name = "write"
    callers = frozenset({TURN})
    access = "write"

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def schema(self) -> dict[str, Any]:
        return {"type": "function", "function": {
            "name": self.name, "description": "Write a file.",
            "parameters": {"type": "object", "required": ["path", "content"],
                           "properties": {"path": {"type": "string"},
                                          "content": {"type": "string"}}}}}

    def describe(self, arguments: Any, context: ToolContext | None = None) -> str:
        lines = [f"--- {arguments['path']}", f"+++ {arguments['path']}", "@@ -0,0 +1 @@"]
        return "\n".join([*lines, *("+" + line for line in arguments["content"].splitlines())])

    async def execute(self, context: ToolContext, arguments: Any) -> ToolResult:
        (self.folder / arguments["path"]).write_text(arguments["content"])
        return ToolResult(f"wrote {arguments['path']}")


class Dump:
    """`dump` N lines tagged TAG: a tool whose output is as long as asked."""

    name = "dump"
    callers = frozenset({TURN})
    access = "read"

    def schema(self) -> dict[str, Any]:
        return {"type": "function", "function": {
            "name": self.name, "description": "Print lines.",
            "parameters": {"type": "object", "required": ["tag", "lines"],
                           "properties": {"tag": {"type": "string"},
                                          "lines": {"type": "integer"}}}}}

    def describe(self, arguments: Any, context: ToolContext | None = None) -> str:
        return f"dump {arguments.get('tag')}"

    async def execute(self, context: ToolContext, arguments: Any) -> ToolResult:
        return ToolResult(output(arguments["tag"], arguments["lines"]))


def output(tag: str, lines: int) -> str:
    return "\n".join(f"{tag} line {i} of the output of a long build step" for i in range(lines))


def install(monkeypatch, *extra: Any) -> ToolRegistry:
    """The program's tools plus `extra`, as the registry turns use (undone at the end)."""
    registry = ToolRegistry([*tools.registry(), *extra])
    monkeypatch.setattr(tools, "_tools", registry)
    return registry


def main(argv: list[str]) -> int:
    """`python -m tests.fakes.tools ARGS`: the real `ikigai ARGS` with `run` and `write`
    (under $FAKE_TOOLS_DIR) registered beside the program's tools."""
    import os

    from ikigai_tui.cli import main as ikigai

    tools._tools = ToolRegistry([*tools.registry(), Shell(),
                                 Write(Path(os.environ.get("FAKE_TOOLS_DIR", ".")))])
    return ikigai(argv)


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
