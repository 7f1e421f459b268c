"""The services a session wires for its features and front ends (a mixin of Session,
core/session.py): each built on first use and handed what it reads, so that loading the
command path, the compactor or the matchers waits until one is needed."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

from ikigai_tui.core.gateway import Gateway
from ikigai_tui.core.usage_service import UsageService

if TYPE_CHECKING:
    from ikigai_tui.core.agents import AgentRuntime, AgentTree
    from ikigai_tui.core.bodies import Bodies
    from ikigai_tui.core.compaction.service import Compactor
    from ikigai_tui.core.context import ContextService
    from ikigai_tui.core.matching import Matcher
    from ikigai_tui.core.matching.embedder import Embedder
    from ikigai_tui.core.memory.service import MemoryService
    from ikigai_tui.core.models import ModelPolicy
    from ikigai_tui.core.ports import Persistence
    from ikigai_tui.core.provider import ProviderFactory
    from ikigai_tui.core.replay import Replayer


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

    async def replayer(self, agent_id: str) -> Replayer: ...

    @cached_property
    def contexts(self) -> ContextService:
        """The context service: request plans, meters, token factors."""
        from ikigai_tui.core.context import ContextService
        return ContextService(tree=self.tree, replayer=self.replayer, models=self,
                              limits=self.models, counts=self.store,
                              bodies=self.bodies, factors=self.factors,
                              policy=lambda: self.settings.compaction)

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
        """Usage accounting: each agent's tokens and cost to date (core/usage_service.py)."""
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
