"""Tools from MCP servers: what the core knows of them, without the SDK.

A server is configured as `[mcp.NAME]` (ServerConfig); the adapter that speaks the
protocol (ikigai_tui/mcp_servers, wired by the runtime) answers the `ToolServers` port.
Each tool a running server lists is offered to the LLM as `NAME__tool` (McpTool: access
"mcp", so the user's rules decide, `ask` by default), with the server's own schema. The
servers start with the first turn that offers tools; one that fails, dies or stops
answering is one line in the scrollback and its tools go away until `/mcp restart NAME`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

if TYPE_CHECKING:
    from ikigai_tui.core.tools import ToolContext, ToolResult

SEPARATOR = "__"  # between the server's name and its tool's: github__create_issue
NAME_PATTERN = re.compile(r"^[A-Za-z0-9_-]+$")
_NAME_MAX = 64  # what the providers accept as a function name
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
DESCRIPTION_LIMIT = 2_000  # characters of a server's tool description offered to the LLM

# A server's states, as /mcp shows them.
NOT_STARTED, STARTING, RUNNING, FAILED, STOPPED = (
    "not started", "starting", "running", "failed", "stopped")


class ServerConfig(NamedTuple):
    """One `[mcp.NAME]` table: a command to run (stdio) or a URL (streamable HTTP)."""

    name: str
    command: tuple[str, ...] = ()
    url: str = ""
    env: Mapping[str, str] = {}  # added to the server's environment (stdio)
    cwd: str = ""  # where the server runs (stdio); "" is the folder ikigai started in
    headers: Mapping[str, str] = {}  # sent with every request (HTTP)
    timeout: float = 120.0  # seconds a call may take
    startup_timeout: float = 30.0  # seconds to start, answer and list the tools

    @property
    def transport(self) -> str:
        return "http" if self.url else "stdio"

    def where(self) -> str:
        """The command or the URL, as /mcp shows it (never the env or the headers: they
        may hold keys)."""
        return self.url if self.url else " ".join(self.command)


class ServerTool(NamedTuple):
    """A tool a running server lists, under the name the server gave it."""

    server: str
    name: str
    description: str
    parameters: dict[str, Any]


class ServerState(NamedTuple):
    config: ServerConfig
    state: str  # NOT_STARTED, STARTING, RUNNING, FAILED or STOPPED
    detail: str = ""  # why it failed or stopped
    tools: tuple[ServerTool, ...] = ()


class CallOutcome(NamedTuple):
    """A call's result, and the line to show when the call took the server down (it
    died or did not answer in time): its tools are gone until /mcp restart."""

    text: str
    is_error: bool = False
    failure: str | None = None


class ToolServers(Protocol):
    """The configured MCP servers (ikigai_tui/mcp_servers answers it)."""

    version: int  # changes whenever the tools on offer change

    def states(self) -> list[ServerState]: ...

    async def start(self) -> list[str]:
        """Start the servers not tried yet, at once; the lines of those that failed."""
        ...

    async def restart(self, name: str) -> ServerState: ...

    async def call(self, server: str, tool: str, arguments: dict[str, Any]) -> CallOutcome: ...

    async def close(self) -> None: ...


def server_of(name: str, servers: ToolServers) -> str | None:
    """The configured server whose tools `name` would be one of, if any."""
    prefix = name.split(SEPARATOR, 1)[0] if SEPARATOR in name else None
    if prefix is None:
        return None
    return next((s.config.name for s in servers.states() if s.config.name == prefix), None)


def offered_name(server: str, tool: str) -> str:
    """`SERVER__tool`, in the characters and length every provider accepts."""
    return (server + SEPARATOR + _UNSAFE.sub("_", tool))[:_NAME_MAX]


def parameters_of(schema: Any) -> dict[str, Any]:
    """A server's input schema as the function's parameters: an object schema always."""
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return {"type": "object", "properties": {}}
    return {k: v for k, v in schema.items() if k not in ("$schema", "title")}


class McpTool:
    """One server tool, as the LLM is offered it."""

    access = "mcp"
    callers = frozenset({"turn"})

    def __init__(self, tool: ServerTool, servers: ToolServers) -> None:
        self.tool = tool
        self.servers = servers
        self.name = offered_name(tool.server, tool.name)

    def schema(self) -> dict[str, Any]:
        description = self.tool.description or f"The {self.tool.name} tool"
        if len(description) > DESCRIPTION_LIMIT:
            description = description[:DESCRIPTION_LIMIT - 1] + "…"
        return {"type": "function", "function": {
            "name": self.name,
            "description": f"[MCP server {self.tool.server}] {description}",
            "parameters": self.tool.parameters,
        }}

    def describe(self, arguments: Any, context: ToolContext | None = None) -> str:
        shown = json.dumps(arguments, ensure_ascii=False, indent=2, sort_keys=True)
        return (f"MCP server '{self.tool.server}' runs its tool '{self.tool.name}' with:\n"
                f"{shown}")

    async def execute(self, context: ToolContext, arguments: Any) -> ToolResult:
        from ikigai_tui.core.notices import ErrorNotice
        from ikigai_tui.core.tools import ToolResult

        if not isinstance(arguments, dict):
            return ToolResult("Error: the arguments must be a JSON object", True)
        outcome = await self.servers.call(self.tool.server, self.tool.name, arguments)
        if outcome.failure is not None:
            context.host.notify(ErrorNotice(context.agent_id, outcome.failure))
        return ToolResult(outcome.text, outcome.is_error)


class ServerTools:
    """The tools of the running servers, as McpTool objects by offered name: rebuilt only
    when the servers' `version` changes. Two tools that end up with one offered name
    keep the first (the second is reported by `clashes`)."""

    def __init__(self, servers: ToolServers) -> None:
        self.servers = servers
        self._version = -1
        self._tools: dict[str, McpTool] = {}
        self.clashes: list[str] = []

    def current(self) -> dict[str, McpTool]:
        if self._version != self.servers.version:
            tools: dict[str, McpTool] = {}
            clashes: list[str] = []
            for state in self.servers.states():
                if state.state != RUNNING:
                    continue
                for listed in state.tools:
                    tool = McpTool(listed, self.servers)
                    if tool.name in tools:
                        clashes.append(f"{listed.server}: {listed.name}")
                        continue
                    tools[tool.name] = tool
            self._tools, self.clashes, self._version = tools, clashes, self.servers.version
        return self._tools


def tool_lines(tools: Sequence[ServerTool], width: int = 100) -> list[str]:
    """A server's tools for /mcp: the offered name and the description's first line."""
    lines = []
    for tool in tools:
        first = (tool.description or "").strip().splitlines()
        summary = first[0] if first else ""
        line = f"    {offered_name(tool.server, tool.name)}" + (f"  {summary}" if summary else "")
        lines.append(line if len(line) <= width else line[:width - 1] + "…")
    return lines
