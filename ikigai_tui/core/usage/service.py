"""The session's usage accounting: each agent's tokens and cost to date, read from its
replayed history (core/usage/ledger.py's ledger) or, for every agent at once, summed by the
store without reading any history."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from ikigai_tui.core.agents import AgentTree
from ikigai_tui.core.ports import Persistence
from ikigai_tui.core.replay.replayer import Replayer
from ikigai_tui.core.usage.ledger import TIER, UsageLedger, UsageTotals, totals_from_sums


class UsageService:
    def __init__(self, store: Persistence, tree: AgentTree, providers: object,
                 replayer: Callable[[str], Awaitable[Replayer]]) -> None:
        self.store = store
        self.tree = tree
        self.replayer = replayer
        prices = getattr(providers, "prices", None) or (lambda model: None)
        self.ledger = UsageLedger(prices)  # each usage event read once

    async def totals(self, agent_id: str) -> UsageTotals:
        """The agent's usage to date (its log is read if it was not yet)."""
        return self.ledger.totals(agent_id, (await self.replayer(agent_id)).history)

    async def report(self) -> dict[str, UsageTotals]:
        """Every agent's usage in one pass over the log, reading no agent's history (the
        reports: `agents` on a million events takes a second, not a replay of each)."""
        found = totals_from_sums(await self.store.usage_sums(TIER), self.ledger.price)
        return {a.id: found.get(a.id, UsageTotals()) for a in self.tree}

    def now(self, agent_id: str) -> UsageTotals | None:
        """The same without reading anything: None while the agent's log is not loaded
        (the agent tree shows what it can at once, and the rest once it is read)."""
        r = self.tree[agent_id].replayer
        return None if r is None else self.ledger.totals(agent_id, r.history)
