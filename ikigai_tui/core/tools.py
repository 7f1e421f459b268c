"""Tools the LLM is offered, as JSON schemas, and their execution."""

from __future__ import annotations

import functools
import json
from typing import TYPE_CHECKING, Any

from ikigai_tui.core.command_table import REGISTRY
from ikigai_tui.core.commands import CommandError

if TYPE_CHECKING:
    from ikigai_tui.core.session import Session


def slash_tool() -> dict[str, Any]:
    names = REGISTRY.llm_names()
    usage = "; ".join(REGISTRY.get(n).usage for n in names)  # type: ignore[union-attr]
    return {
        "type": "function",
        "function": {
            "name": "slash",
            "description": (
                "Run an ikigai slash command on your own context or agents. Context changes "
                f"(clear, rewind) apply when this turn ends. Usage: {usage}"
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "command": {"type": "string", "enum": names,
                                "description": "The command, without the slash"},
                    "args": {"type": "string", "description": "Its arguments as one string"},
                },
                "required": ["command"],
            },
        },
    }


@functools.lru_cache(maxsize=1)
def tool_schemas() -> list[dict[str, Any]]:
    """The same list object every time: token counts of it are cached by identity."""
    return [slash_tool()]


async def execute_tool(session: Session, agent_id: str, name: str, arguments: str) -> tuple[str, bool]:
    """Run one tool call: (result text, is_error)."""
    try:
        args = json.loads(arguments or "{}")
    except json.JSONDecodeError as exc:
        return f"Error: arguments are not valid JSON ({exc.msg})", True
    if name != "slash":
        return f"Error: unknown tool '{name}'", True
    if not isinstance(args, dict) or not isinstance(args.get("command"), str):
        return "Error: slash needs a 'command' string", True
    command = args["command"].lstrip("/")
    if command not in REGISTRY.llm_names():
        return f"Error: '{command}' is not available; use one of {', '.join(REGISTRY.llm_names())}", True
    extra = args.get("args") or ""
    if not isinstance(extra, str):
        return "Error: 'args' must be a string", True
    try:
        result = await session.command(agent_id, f"/{command} {extra}".strip(), source="llm")
    except CommandError as exc:
        return f"Error: {exc}", True
    return "\n".join(result.lines) or "OK", False
