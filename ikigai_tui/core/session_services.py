"""The services a session wires for its features and front ends (a mixin of Session,
core/session.py): each built on first use and handed what it reads, so that loading the
command path, the compactor or the matchers waits until one is needed."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

from ikigai_tui.core.gateway import Gateway
from ikigai_tui.core.usage.service import UsageService

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from ikigai_tui.core.agents import AgentRuntime, AgentTree
    from ikigai_tui.core.commands.bus import CommandBus
    from ikigai_tui.core.commands.context import CommandServices
    from ikigai_tui.core.errors import CommandError
    from ikigai_tui.core.events import Event, WriteBatch
    from ikigai_tui.core.leases import LeaseKeeper
    from ikigai_tui.core.notices import Notice
    from ikigai_tui.core.tokens.window import ContextMeter, Window
    from ikigai_tui.core.replay.bodies import Bodies
    from ikigai_tui.core.compaction.service import Compactor
    from ikigai_tui.core.context import ContextService
    from ikigai_tui.core.matching import Matcher
    from ikigai_tui.core.matching.embedder import Embedder
    from ikigai_tui.core.memory.service import MemoryService
    from ikigai_tui.core.models import ModelPolicy
    from ikigai_tui.core.ports import Persistence
    from ikigai_tui.core.provider import ProviderFactory
    from ikigai_tui.core.replay.replayer import Replayer
    from ikigai_tui.core.tools import ToolSet
    from ikigai_tui.core.tools.servers import ToolServers


class SessionServices:
    # Held by Session (declared here for readers and type checkers).
    store: Persistence
    providers: ProviderFactory
    models: ModelPolicy
    settings: Any
    tree: AgentTree
    bodies: Bodies
    factors: dict[str, tuple[float, int]]
    embedder: Embedder | None
    leases: LeaseKeeper
    mailwake: Any  # core/mailwake.py's MailWake

    async def replayer(self, agent_id: str) -> Replayer: ...

    # Session's, for the command path's wiring below.
    def new_id(self) -> str: ...
    def check_model(self, model: str) -> str: ...
    def budget_of(self, agent: AgentRuntime) -> int: ...
    def model_of(self, agent: AgentRuntime) -> str: ...
    async def measure(self, agent_id: str) -> Window: ...
    def meter(self, agent: AgentRuntime) -> ContextMeter: ...
    def start_if_pending(self, agent_id: str) -> Any: ...
    async def cancel_turns(self, agent_ids: list[str]) -> None: ...
    def notify(self, notice: Notice) -> None: ...
    def key_warning(self, model: str) -> str | None: ...
    async def plan(self, agent_id: str, *, messages: bool = False) -> Any: ...
    workspace: Callable[[str], Path]  # SessionTools'
    toolset: ToolSet  # SessionTools'
    tool_servers: ToolServers | None  # SessionTools'
    async def _commit_command(self, batch: WriteBatch) -> list[Event]: ...
    def _dead_error(self, agent_id: str) -> CommandError: ...
    async def _busy_elsewhere(self, agent_id: str) -> None: ...

    @cached_property
    def contexts(self) -> ContextService:
        """The context service: request plans, meters, token factors."""
        from ikigai_tui.core.context import ContextService
        return ContextService(tree=self.tree, replayer=self.replayer, models=self,
                              limits=self.models, counts=self.store,
                              bodies=self.bodies, factors=self.factors,
                              policy=lambda: self.settings.compaction,
                              tools=lambda: self.toolset.schemas())

    @cached_property
    def gateway(self) -> Gateway:
        """Every LLM call: turns and side requests, one limit per provider, one retry policy."""
        return Gateway(self.providers)

    @cached_property
    def compactor(self) -> Compactor:
        """/compact's summaries and auto-compaction (imported on first use)."""
        from ikigai_tui.core.compaction.service import Compactor

        return Compactor(self, pruned=self.contexts.pruned, policy=lambda: self.settings.compaction)

    @cached_property
    def usages(self) -> UsageService:
        """Usage accounting: each agent's tokens and cost to date (core/usage/service.py)."""
        return UsageService(self.store, self.tree, self.providers, self.replayer)

    @cached_property
    def memory(self) -> MemoryService:
        """The memory tool's folder and rules: the defaults until the runtime attaches the
        configured ones (core/memory/service.py: attach_memory)."""
        from ikigai_tui.core.memory.service import MemoryService, MemorySettings

        return MemoryService(MemorySettings())

    def matcher(self, agent: AgentRuntime, local: bool = False, model: str | None = None):
        """The matcher for the agent's /forget and /remember (see core/matching/choose.py)."""
        from ikigai_tui.core.matching.choose import matcher_for

        return matcher_for(self, agent, local=local, model=model)

    @cached_property
    def local_matcher(self) -> Matcher:
        """The local matcher of this session's log (it keeps its loaded model and vectors)."""
        from ikigai_tui.core.matching.local import LocalMatcher

        return LocalMatcher.over(self.store, self.embedder)

    @cached_property
    def commands(self) -> CommandBus:
        from ikigai_tui.core.commands.bus import CommandBus
        from ikigai_tui.core.commands.registry import ON_DEAD, READ_ONLY, REGISTRY

        return CommandBus(REGISTRY, READ_ONLY, services=self._services, replayer=self.replayer,
                          commit=self._commit_command, dead_error=self._dead_error,
                          busy_elsewhere=self._busy_elsewhere, on_dead=ON_DEAD)

    def _services(self) -> CommandServices:
        from ikigai_tui.core.commands.context import CommandServices
        return CommandServices(self.tree, self.new_id, self.check_model, self.budget_of,
                               self.model_of, self.measure, self.meter, self.start_if_pending,
                               self.cancel_turns, self.notify, self.matcher, self.usages.totals,
                               self.store.page, memory=lambda: self.memory,
                               compactor=self.compactor, bodies=self.bodies,
                               search=self.store.search, elsewhere=self.leases.elsewhere,
                               key_warning=self.key_warning, limits=self.models.limits,
                               replayer=self.replayer,
                               workspace=self.workspace,
                               tool_results=lambda: self.settings.tool_results,
                               servers=lambda: self.tool_servers,
                               plan=self.plan, gateway=lambda: self.gateway,
                               mail=lambda: self.mailwake)
