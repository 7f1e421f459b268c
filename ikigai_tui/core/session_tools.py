"""What a session offers the LLM's tools (a mixin of Session, core/session.py): each
agent's workspace, one tool call run with its result masked, the tool settings, and the
permission rules with who answers an `ask`."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ikigai_tui.core.events import Event, WriteBatch
from ikigai_tui.core.notices import ErrorNotice

if TYPE_CHECKING:
    from ikigai_tui.core.agents import AgentTree
    from ikigai_tui.core.notices import Notice
    from ikigai_tui.core.tools import Tool, ToolSet
    from ikigai_tui.core.tools.context_review import ContextReview
    from ikigai_tui.core.tools.servers import ToolServers
    from ikigai_tui.core.tools.running import ToolSettings
    from ikigai_tui.core.tools.permissions import (
        PermissionAnswer, PermissionRequest, PermissionService,
    )


class SessionTools:
    # Held by Session (declared here for readers and type checkers).
    tree: AgentTree
    settings: Any

    commit: Callable[[WriteBatch], Awaitable[list[Event]]]  # Session's
    notify: Callable[[Notice], None]  # Session's

    # The configured MCP servers (ikigai_tui/mcp_servers; the runtime sets them with
    # use_tool_servers): None when there are none.
    tool_servers: ToolServers | None = None

    @cached_property
    def toolset(self) -> ToolSet:
        """The tools this session offers: the built-in ones and its servers'."""
        from ikigai_tui.core.tools import ToolSet, registry

        return ToolSet(registry, self.tool_servers)

    def use_tool_servers(self, servers: ToolServers | None) -> None:
        self.tool_servers = servers
        self.__dict__.pop("toolset", None)

    def tool(self, name: str) -> Tool | None:
        """The tool offered as `name`, if any (a server's only while it runs)."""
        return self.toolset.get(name)

    async def offer_tools(self, agent_id: str) -> None:
        """Before a turn offers tools: start the MCP servers not tried yet (each that
        fails to start is a line in the agent's scrollback)."""
        servers = self.tool_servers
        if servers is None:
            return
        for line in await servers.start():
            self.notify(ErrorNotice(agent_id, line))

    def workspace(self, agent_id: str) -> Path:
        """The agent's workspace, where its file tools work: its latest `cwd` event's
        folder (/cwd, --cwd) or the one it inherited at fork, else the folder ikigai was
        started in. Read from the replayed state (loaded for any agent that runs a turn
        or a command); an agent not loaded yet answers the default."""
        agent = self.tree.agents.get(agent_id)
        replayer = agent.replayer if agent is not None else None
        if replayer is not None and replayer.cwd:
            return Path(replayer.cwd)
        return Path(self.settings.workspace or os.getcwd())

    async def run_tool(self, agent_id: str, name: str, arguments: str,
                       call_event: int | None) -> tuple[str, bool]:
        """One tool call of the agent's turn: (result text, is_error), with the
        environment's secrets and anything shaped like a key masked, whatever the tool (a
        call stopped by the user raises ToolInterrupted with its output masked too)."""
        from ikigai_tui.core.tools import execute_tool
        from ikigai_tui.core.tools.running import ToolInterrupted
        from ikigai_tui.support.secrets import mask

        try:
            text, is_error = await execute_tool(self, agent_id, name, arguments, call_event=call_event)
        except ToolInterrupted as stopped:
            raise ToolInterrupted(mask(stopped.output)) from None
        return mask(text), is_error

    @property
    def tool_settings(self) -> ToolSettings:
        return self.settings.tools

    @cached_property
    def permissions(self) -> PermissionService:
        """The permission rules and who answers an `ask` (core/tools/permissions.py): the
        defaults until the runtime sets the configured ones; the front end installs the
        reviewer (none: every `ask` is refused)."""
        from ikigai_tui.core.tools.permissions import PermissionService

        return PermissionService()

    @cached_property
    def context_review(self) -> ContextReview:
        """Who answers a context change the LLM asks for (core/tools/context_review.py):
        the setting, and the reviewer the front end installs under "ask"."""
        from ikigai_tui.core.tools.context_review import ContextReview

        return ContextReview(getattr(self.settings, "llm_context_changes", "allow"))

    async def ask_permission(self, request: PermissionRequest) -> PermissionAnswer:
        """Ask the user (the installed reviewer) whether a tool call may run; "always for
        this agent" is recorded as the agent's `permission` event before the call runs."""
        from ikigai_tui.core.tools.permissions import ALWAYS, grant_payload

        answer = await self.permissions.ask(request)
        if answer.choice == ALWAYS:
            batch = WriteBatch()
            batch.add(request.agent_id, "permission", grant_payload(request.tool))
            await self.commit(batch)
        return answer
