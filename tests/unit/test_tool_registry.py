"""The tool registry (issue 11): tools with a schema, who may call them and how they run;
schemas per caller, `slash` for the conversation's turns."""

from __future__ import annotations

import json
from typing import Any

from ikigai_tui.core.commands.registry import REGISTRY
from ikigai_tui.core.gateway import Gateway
from ikigai_tui.core.tools import (
    TOOLS, TURN, ToolContext, ToolRegistry, ToolResult, execute_tool, tool_schemas,
)
from ikigai_tui.core.tools.slash import SlashTool
from ikigai_tui.llm.providers import Providers


class Picker:
    """A side-request tool, shaped like the coming filter_context."""

    name = "pick"
    callers = frozenset({"matcher"})
    access = "ikigai"  # like filter_context: the program's own, no permission asked

    def __init__(self) -> None:
        self.seen: list[Any] = []

    def schema(self) -> dict[str, Any]:
        return {"type": "function", "function": {"name": "pick", "description": "Pick ids.",
                "parameters": {"type": "object", "required": ["ids"],
                               "properties": {"ids": {"type": "array"}}}}}

    async def execute(self, context: ToolContext, arguments: Any) -> ToolResult:
        self.seen.append((context.caller, arguments))
        return ToolResult(f"picked {arguments['ids']}")


def test_schemas_are_per_caller_and_stable():
    assert [s["function"]["name"] for s in tool_schemas()] == [
        "slash", "filter_context", "memory", "read_file", "list_files", "search_files",
        "write_file", "edit_file", "bash"]
    assert tool_schemas() is tool_schemas(TURN) is TOOLS.schemas(TURN)
    enum = tool_schemas()[0]["function"]["parameters"]["properties"]["command"]["enum"]
    assert enum == REGISTRY.llm_names()
    registry = ToolRegistry([SlashTool(), Picker()])
    assert [s["function"]["name"] for s in registry.schemas("matcher")] == ["pick"]
    assert [s["function"]["name"] for s in registry.schemas(TURN)] == ["slash"]
    assert registry.schemas("memory") == []


async def test_a_tool_is_unknown_to_callers_it_does_not_allow():
    picker = Picker()
    registry = ToolRegistry([picker])
    turn = ToolContext(None, "a", TURN)  # type: ignore[arg-type]
    assert await registry.execute(turn, "pick", '{"ids": [1]}') == ("Error: unknown tool 'pick'", True)
    assert picker.seen == []
    matcher = ToolContext(None, "a", "matcher")  # type: ignore[arg-type]
    assert await registry.execute(matcher, "pick", '{"ids": [1]}') == ("picked [1]", False)
    assert picker.seen == [("matcher", {"ids": [1]})]


async def test_bad_calls_are_error_results():
    ctx = ToolContext(None, "a")  # type: ignore[arg-type]
    assert (await TOOLS.execute(ctx, "nope", "{bad"))[0].startswith("Error: arguments are not valid JSON")
    assert await TOOLS.execute(ctx, "nope", "{}") == ("Error: unknown tool 'nope'", True)
    assert await TOOLS.execute(ctx, "slash", "[1]") == ("Error: slash needs a 'command' string", True)
    assert await execute_tool(None, "a", "slash", '{"command": "model"}') == (  # type: ignore[arg-type]
        f"Error: 'model' is not available; use one of {', '.join(REGISTRY.llm_names())}", True)
    assert await execute_tool(None, "a", "slash", '{"command": "mark", "args": 3}') == (  # type: ignore[arg-type]
        "Error: 'args' must be a string", True)


async def test_side_request_offers_the_callers_tools_and_runs_the_call():
    picker = Picker()
    registry = ToolRegistry([SlashTool(), picker])
    reply = await Gateway(Providers()).complete(
        "matcher", "offline", [{"role": "user", "content": "which?"}], registry.schemas("matcher"),
        tool_choice="required")
    (call,) = reply.tool_calls
    assert call.name == "pick" and json.loads(call.arguments) == {"ids": []}
    result = await registry.execute(ToolContext(None, "a", "matcher"), call.name, call.arguments)  # type: ignore[arg-type]
    assert result == ("picked []", False)
