"""The tools an LLM may call: a registry of Tool objects, each with its JSON schema, who
may call it, and how it runs.

`slash` (the LLM side of the command registry) `filter_context` (the LLM's /forget
and /remember: preview, then apply) and `memory` (Anthropic's memory-tool commands over
the memories folder). Before a tool whose `access` is not "ikigai" runs, the user's
rules decide (core/tools/permissions.py): allow, deny, or ask the user through the
host's `ask_permission`, showing `tool.describe(arguments)`. A caller
(a conversation's turn, or a side request's purpose) is offered the schemas of the tools
that allow it, as one list object per caller: token counts of it are cached by identity.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

if TYPE_CHECKING:
    from pathlib import Path

    from ikigai_tui.core.agents import AgentRuntime, AgentTree
    from ikigai_tui.core.replay.bodies import Bodies
    from ikigai_tui.core.commands.bus import Pending
    from ikigai_tui.core.commands.parse import CommandResult
    from ikigai_tui.core.tools.context_review import ContextReview
    from ikigai_tui.core.matching import Matcher
    from ikigai_tui.core.memory.service import MemoryService
    from ikigai_tui.core.commands.proposals import Proposal, Verdict
    from ikigai_tui.core.replay.replayer import Replayer
    from ikigai_tui.core.tokens.window import ContextMeter, Window
    from ikigai_tui.core.tools.permissions import (
        PermissionAnswer, PermissionRequest, PermissionService,
    )
    from ikigai_tui.core.tools.servers import ToolServers
    from ikigai_tui.core.notices import Notice

TURN = "turn"  # the caller of a conversation's turn: the agent's own LLM


class Submits(Protocol):
    """Applies a proposal a tool built, as the command `text` (core/commands/bus.py)."""

    async def submit(self, agent_id: str, command: str, proposal: Proposal, verdict: Verdict,
                     source: str = ..., refused: tuple[str, str] | None = ...) -> CommandResult: ...


class ToolHost(Protocol):
    """What the tools use (the session answers all of it): the agents and their replayed
    contexts, message text, measuring, the matcher, commands, the memory folder, the
    permission rules and who answers an `ask`."""

    tree: AgentTree
    bodies: Bodies
    commands: Submits
    memory: MemoryService
    permissions: PermissionService

    async def ask_permission(self, request: PermissionRequest) -> PermissionAnswer:
        """The user's answer to one `ask` (once, refuse, always; "always" is recorded
        as a `permission` event of the agent); refused when nobody can answer."""
        ...

    async def replayer(self, agent_id: str) -> Replayer: ...

    def matcher(self, agent: AgentRuntime) -> Matcher: ...

    def meter(self, agent: AgentRuntime) -> ContextMeter: ...

    async def measure(self, agent_id: str) -> Window: ...

    async def command(self, agent_id: str, text: str, source: str = ...) -> CommandResult: ...

    async def propose(self, agent_id: str, text: str, source: str = ...) -> CommandResult | Pending:
        """A command up to its review: its result, or a proposal to `answer`."""
        ...

    async def answer(self, pending: Pending, verdict: Verdict,
                     refused: tuple[str, str] | None = ...) -> CommandResult: ...

    @property
    def context_review(self) -> ContextReview:
        """Who answers a context change the LLM asks for (context_review.py)."""
        ...

    def workspace(self, agent_id: str) -> Path:
        """The agent's working folder: the file tools never reach outside it."""
        ...

    def notify(self, notice: Notice) -> None:
        """A line for the scrollback (an MCP server that went down during a call)."""
        ...


class ToolContext(NamedTuple):
    """What a tool runs with: its host (the session), the agent whose LLM called it, the
    caller, and the id of the committed tool_call event being answered (None outside a
    turn)."""

    host: ToolHost
    agent_id: str
    caller: str = TURN
    call_event: int | None = None


class ToolResult(NamedTuple):
    text: str
    is_error: bool = False


class Tool(Protocol):
    name: str
    callers: frozenset[str]  # who may call it: TURN, or side-request purposes
    # What it may touch: "read", "write", "shell", "mcp", or "ikigai" (the program's own
    # tools, under their own reviews). A tool without one is asked about.
    access: str

    def describe(self, arguments: Any, context: ToolContext | None = None) -> str:
        """Exactly what will run, for the permission dialog (non-"ikigai" tools): with the
        call's context, where (the agent's workspace) and, for a write, the diff; pure."""
        ...

    def schema(self) -> dict[str, Any]:
        """The OpenAI-format function definition offered to the LLM."""
        ...

    async def execute(self, context: ToolContext, arguments: Any) -> ToolResult:
        """Run one call with its decoded arguments (any JSON value: checking them is the
        tool's job); errors are results, not exceptions."""
        ...


class ToolRegistry:
    def __init__(self, tools: Sequence[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self._schemas: dict[str, list[dict[str, Any]]] = {}
        for tool in tools:
            self.add(tool)

    def add(self, tool: Tool) -> None:
        if tool.name in self._tools:
            raise ValueError(f"tool '{tool.name}' is registered twice")
        self._tools[tool.name] = tool
        self._schemas.clear()

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def for_caller(self, caller: str = TURN) -> list[Tool]:
        return [t for t in self._tools.values() if caller in t.callers]

    def schemas(self, caller: str = TURN) -> list[dict[str, Any]]:
        """The schemas offered to `caller`: the same list object every time."""
        found = self._schemas.get(caller)
        if found is None:
            found = self._schemas[caller] = [t.schema() for t in self.for_caller(caller)]
        return found

    async def execute(self, context: ToolContext, name: str, arguments: str) -> ToolResult:
        """Run one tool call as the LLM wrote it (arguments as JSON text). A tool the
        caller may not call is unknown to it."""
        return await run_call(self.get(name), context, name, arguments)


class ToolSet:
    """What one session offers: the built-in tools (the registry) and the tools of its
    running MCP servers (core/tools/servers.py), offered to a conversation's turn after
    the built-in ones. `schemas` is one list object while neither changes."""

    def __init__(self, builtins: Callable[[], ToolRegistry],
                 servers: ToolServers | None = None) -> None:
        from ikigai_tui.core.tools.servers import ServerTools

        self.builtins = builtins  # the registry, asked each time (tests replace it)
        self.servers = servers
        self._server_tools = ServerTools(servers) if servers is not None else None
        self._offered: tuple[int, list, list[dict[str, Any]]] | None = None

    def server_tools(self) -> dict[str, Tool]:
        return dict(self._server_tools.current()) if self._server_tools is not None else {}

    def get(self, name: str) -> Tool | None:
        found = self.builtins().get(name)
        if found is None and self._server_tools is not None:
            found = self._server_tools.current().get(name)
        return found

    def schemas(self, caller: str = TURN) -> list[dict[str, Any]]:
        base = self.builtins().schemas(caller)
        if self._server_tools is None or caller != TURN:
            return base
        tools = self._server_tools.current()
        if not tools:
            return base
        version = self._server_tools.servers.version
        offered = self._offered
        if offered is None or offered[0] != version or offered[1] is not base:
            offered = self._offered = (version, base, base + [t.schema() for t in tools.values()])
        return offered[2]

    async def execute(self, context: ToolContext, name: str, arguments: str) -> ToolResult:
        tool = self.get(name)
        if tool is None and self.servers is not None:
            from ikigai_tui.core.tools.servers import server_of

            server = server_of(name, self.servers)
            if server is not None:  # its server stopped since the call was offered
                return ToolResult(f"Error: {name} did not run: MCP server '{server}' is not "
                                  f"running (the user can /mcp restart {server})", True)
        return await run_call(tool, context, name, arguments)


async def run_call(tool: Tool | None, context: ToolContext, name: str,
                   arguments: str) -> ToolResult:
    """One call of `tool` (None: no such tool), its arguments as the LLM wrote them
    (JSON text): decoded, allowed by the user's rules, run. A tool the caller may not
    call is unknown to it."""
    try:
        args = json.loads(arguments or "{}")
    except json.JSONDecodeError as exc:
        return ToolResult(f"Error: arguments are not valid JSON ({exc.msg})", True)
    if tool is None or context.caller not in tool.callers:
        return ToolResult(f"Error: unknown tool '{name}'", True)
    access = getattr(tool, "access", None)
    if access != IKIGAI:
        refused = await _permitted(context, tool, access, args)
        if refused is not None:
            return refused
    return await tool.execute(context, args)


IKIGAI = "ikigai"


async def _permitted(context: ToolContext, tool: Tool, access: str | None,
                     arguments: Any) -> ToolResult | None:
    """None when the call may run; else the refusal the LLM reads (never a wait without
    an answer: with nobody to ask, an `ask` is refused)."""
    from ikigai_tui.core.tools.permissions import (
        ALLOW, DENY, REFUSE, Grants, PermissionRequest,
    )

    host, agent_id = context.host, context.agent_id
    replayer = await host.replayer(agent_id)
    decision = host.permissions.decide(tool.name, access, Grants(replayer.base.granted, replayer.granted))
    if decision == ALLOW:
        return None
    if decision == DENY:
        return ToolResult(f"Error: the user's rules deny {tool.name}; it did not run", True)
    request = PermissionRequest(agent_id, host.tree.label(agent_id), tool.name, access or "",
                                describe(tool, arguments, context))
    answer = await host.ask_permission(request)
    if answer.choice != REFUSE:
        return None
    why = f" ({answer.reason})" if answer.reason else ""
    return ToolResult(f"Error: the user refused {tool.name}{why}; it did not run", True)


def describe(tool: Tool, arguments: Any, context: ToolContext | None = None) -> str:
    """What the permission dialog shows: the tool's own description of the call (a tool
    without one: its name and arguments as JSON)."""
    describer = getattr(tool, "describe", None)
    if describer is None:
        return f"{tool.name} {json.dumps(arguments, ensure_ascii=False, indent=2)}"
    try:
        return str(describer(arguments, context))
    except Exception as exc:  # a bad argument: one line, and the call still asks
        return f"{tool.name}: cannot describe this call ({exc})"


def _default() -> ToolRegistry:
    from ikigai_tui.core.tools import file_writes, files
    from ikigai_tui.core.tools.bash import BashTool
    from ikigai_tui.core.tools.filter_context import FilterContextTool
    from ikigai_tui.core.tools.memory import MemoryTool
    from ikigai_tui.core.tools.slash import SlashTool

    return ToolRegistry([SlashTool(), FilterContextTool(), MemoryTool(),
                         files.ReadFileTool(), files.ListFilesTool(), files.SearchFilesTool(),
                         file_writes.WriteFileTool(), file_writes.EditFileTool(), BashTool()])


_tools: ToolRegistry | None = None


def registry() -> ToolRegistry:
    """The tools, built on first use (the memory tool's modules stay out of start-up)."""
    global _tools
    if _tools is None:
        _tools = _default()
    return _tools


def __getattr__(name: str) -> Any:
    if name == "TOOLS":
        return registry()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def tool_schemas(caller: str = TURN) -> list[dict[str, Any]]:
    """The schemas a caller is offered (a conversation's turn by default)."""
    return registry().schemas(caller)


async def execute_tool(host: ToolHost, agent_id: str, name: str, arguments: str,
                       caller: str = TURN, call_event: int | None = None) -> tuple[str, bool]:
    """Run one tool call: (result text, is_error), from the host's tools (a session's
    ToolSet, with its MCP servers' tools) or, for a host without any, the built-in ones."""
    tools = getattr(host, "toolset", None) or registry()
    return await tools.execute(ToolContext(host, agent_id, caller, call_event), name, arguments)


def slash_tool() -> dict[str, Any]:
    from ikigai_tui.core.tools.slash import slash_schema

    return slash_schema()
