"""The `slash` tool: the LLM runs its slash commands (the LLM half of the command
registry) on its own context and agents."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from ikigai_tui.core.commands.parse import CommandResult
from ikigai_tui.core.commands.registry import REGISTRY
from ikigai_tui.core.commands.proposals import FilterProposal
from ikigai_tui.core.tools.context_review import change_reference, outcome_reply, review_pending
from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.tools import TURN, ToolContext, ToolResult


def slash_schema() -> dict[str, Any]:
    """Its command enum is the command registry's LLM names, as they are now."""
    names = REGISTRY.llm_names()
    usage = "; ".join(REGISTRY.get(n).usage for n in names)  # type: ignore[union-attr]
    return {
        "type": "function",
        "function": {
            "name": "slash",
            "description": (
                "Run an ikigai slash command on your own context or agents. Context changes "
                "(clear, rewind) wait for the user's review and apply when this turn ends; "
                f"the result says what was applied. Usage: {usage}"
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


class SlashTool:
    name = "slash"
    callers = frozenset({TURN})
    access = "ikigai"  # the program's own tool: governed by its own review

    def schema(self) -> dict[str, Any]:
        return slash_schema()

    async def execute(self, context: ToolContext, arguments: Any) -> ToolResult:
        if not isinstance(arguments, dict) or not isinstance(arguments.get("command"), str):
            return ToolResult("Error: slash needs a 'command' string", True)
        command = arguments["command"].lstrip("/")
        names = REGISTRY.llm_names()
        if command not in names:
            return ToolResult(f"Error: '{command}' is not available; use one of {', '.join(names)}", True)
        extra = arguments.get("args") or ""
        if not isinstance(extra, str):
            return ToolResult("Error: 'args' must be a string", True)
        host = context.host
        try:
            outcome = await host.propose(context.agent_id, f"/{command} {extra}".strip(),
                                         source="llm")
            if isinstance(outcome, CommandResult):
                return ToolResult("\n".join(outcome.lines) or "OK", False)
            # A change of the context (clear, rewind): the user's review first. Its event
            # records this call, which the result names (change_reference).
            call = context.call_event
            if call is not None and isinstance(outcome.proposal, FilterProposal):
                outcome.proposal = replace(outcome.proposal, call=call)
            reviewed, result = await review_pending(host, context.agent_id, outcome)
        except CommandError as exc:
            return ToolResult(f"Error: {exc}", True)
        more = ({"change": change_reference(call, result)}
                if call is not None and reviewed.refused_by is None else {})
        # Its words first (as any command's), then exactly what happened.
        reply = outcome_reply(outcome.proposal, reviewed, result, command=f"/{command}", **more)
        return ToolResult("\n".join([*result.lines, json.dumps(reply)]), False)
