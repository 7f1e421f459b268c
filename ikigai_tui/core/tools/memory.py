"""The `memory` tool: Anthropic's memory-tool commands over the memories folder.

`view` answers at once. A write is planned (checked against the sandbox and the limits),
reviewed when `memory_writes = "ask"`, then made and recorded as a `memory` event through
the command bus (a `/memory ...` command record, source llm), so the log says which
agent changed what and when, and /undo can reverse it. The files live outside the log:
they survive /clear and compaction.
"""

from __future__ import annotations

from typing import Any

from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.memory.commands import plan, view
from ikigai_tui.core.memory.proposal import MemoryProposal
from ikigai_tui.core.memory.sandbox import MemoryRefused
from ikigai_tui.core.memory.service import ASK_REFUSAL
from ikigai_tui.core.ports import StoreError
from ikigai_tui.core.commands.proposals import ACCEPT_ALL
from ikigai_tui.core.tools import TURN, ToolContext, ToolResult

NAME = "memory"
COMMANDS = ("view", "create", "str_replace", "insert", "delete", "rename")


def memory_schema() -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": NAME,
            "description": (
                "Your memory: files under /memories that outlive this conversation, /clear and "
                "compaction; view /memories first. view: a folder's listing or a file's lines "
                "(view_range [start, end], end -1: to the end). create: a new file. str_replace: "
                "old_str must appear once. insert: insert_text after line insert_line (0: top). "
                "delete: a file or folder. rename: old_path to new_path. Changes are recorded "
                "and the user can undo them."),
            "parameters": {
                "type": "object",
                "properties": {
                    "command": {"type": "string", "enum": list(COMMANDS)},
                    "path": {"type": "string", "description": "like /memories/notes.md"},
                    "view_range": {"type": "array", "items": {"type": "integer"}},
                    "file_text": {"type": "string"},
                    "old_str": {"type": "string"},
                    "new_str": {"type": "string"},
                    "insert_line": {"type": "integer"},
                    "insert_text": {"type": "string"},
                    "old_path": {"type": "string"},
                    "new_path": {"type": "string"},
                },
                "required": ["command"],
            },
        },
    }


class MemoryTool:
    name = NAME
    callers = frozenset({TURN})
    access = "ikigai"  # the program's own tool: governed by its own review

    def schema(self) -> dict[str, Any]:
        return memory_schema()

    async def execute(self, context: ToolContext, arguments: Any) -> ToolResult:
        if not isinstance(arguments, dict) or arguments.get("command") not in COMMANDS:
            return ToolResult(f"Error: memory needs a 'command', one of {', '.join(COMMANDS)}", True)
        service = context.host.memory
        try:
            if arguments["command"] == "view":
                return ToolResult(view(service.box, arguments))
            proposal = MemoryProposal(plan(service.box, arguments), service.box)
        except MemoryRefused as exc:
            return ToolResult(f"Error: {exc}", True)
        if service.ask:
            if service.reviewer is None:
                return ToolResult(f"Error: {ASK_REFUSAL}", True)
            verdict = await service.reviewer(proposal)
            if not verdict.accepted:
                return ToolResult("Error: the user refused this memory change; nothing was "
                                  "written", True)
        try:
            result = await context.host.commands.submit(
                context.agent_id, proposal.command, proposal, ACCEPT_ALL, source="llm")
        except (CommandError, StoreError) as exc:
            _take_back(proposal)
            return ToolResult(f"Error: {exc}", True)
        except BaseException:
            _take_back(proposal)
            raise
        return ToolResult("\n".join(result.lines))


def _take_back(proposal: MemoryProposal) -> None:
    try:
        proposal.take_back()
    except MemoryRefused:
        pass  # changed again meanwhile: leave it; nothing recorded says otherwise
