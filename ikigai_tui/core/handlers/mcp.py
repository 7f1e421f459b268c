"""/mcp: the MCP servers, their state and their tools; /mcp restart NAME."""

from __future__ import annotations

from ikigai_tui.core.commands.context import CommandContext
from ikigai_tui.core.commands.parse import CommandResult
from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.tools.servers import (
    FAILED, NOT_STARTED, RUNNING, ServerState, ToolServers, tool_lines,
)

USAGE = "usage: /mcp [restart NAME]"


def server_lines(state: ServerState) -> list[str]:
    """A server's line (name, state, where it runs) and, while it runs, its tools."""
    c = state.config
    where = f"{c.transport}: {c.where()}"
    if state.state == RUNNING:
        count = len(state.tools)
        head = f"  {c.name}  running, {count} tool{'s' if count != 1 else ''}  ({where})"
        return [head, *tool_lines(state.tools)]
    if state.state == FAILED:
        return [f"  {c.name}  failed: {state.detail}  ({where}); /mcp restart {c.name}"]
    if state.state == NOT_STARTED:
        return [f"  {c.name}  not started: it starts with the next turn  ({where})"]
    detail = f": {state.detail}" if state.detail else ""
    return [f"  {c.name}  {state.state}{detail}  ({where})"]


def _servers(c: CommandContext) -> ToolServers | None:
    return c.services.servers() if c.services.servers is not None else None


async def mcp(c: CommandContext) -> CommandResult:
    servers = _servers(c)
    words = c.args.rest().split()
    if not words:
        if servers is None or not servers.states():
            return CommandResult(["No MCP server is configured: add an [mcp.NAME] table to the "
                                  "config file (/help mcp)."])
        states = servers.states()
        lines = [f"MCP servers ({len(states)}):"]
        for state in states:
            lines.extend(server_lines(state))
        return CommandResult(lines, data=[s.config.name for s in states])
    if words[0] != "restart" or len(words) != 2:
        raise CommandError(USAGE)
    name = words[1]
    known = [s.config.name for s in servers.states()] if servers is not None else []
    if servers is None or name not in known:
        have = f" (configured: {', '.join(known)})" if known else " (none is configured)"
        raise CommandError(f"no MCP server '{name}'{have}")
    state = await servers.restart(name)
    if state.state != RUNNING:
        raise CommandError(f"MCP server '{name}' failed to start: {state.detail}")
    count = len(state.tools)
    return CommandResult([f"MCP server '{name}' restarted: {count} tool{'s' if count != 1 else ''}.",
                          *tool_lines(state.tools)], data=name)
