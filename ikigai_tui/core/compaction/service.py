"""The session's compaction service: proposals for /compact, and the automatic policy.

One compaction of an agent at a time, whoever asked (the user's /compact or the policy):
a second one is refused while the first is summarising.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ikigai_tui.core.commands import CommandError
from ikigai_tui.core.compaction import CompactingNotice, CompactionSettings
from ikigai_tui.core.compaction.proposal import CompactProposal
from ikigai_tui.core.compaction.select import CompactArgs, nothing_to_compact, select
from ikigai_tui.core.compaction.pruned import PrunedSummaries
from ikigai_tui.core.compaction.summarise import (
    REPLY_TOKENS, Summariser, Summary, extractive_summary,
)
from ikigai_tui.core.events import message_text
from ikigai_tui.core.matching import Candidate
from ikigai_tui.core.proposals import ProposalItem, _first_line
from ikigai_tui.core.provider import ProviderError
from ikigai_tui.core.tokens import TokenCounter

if TYPE_CHECKING:
    from ikigai_tui.core.agents import AgentRuntime
    from ikigai_tui.core.command_context import CommandContext
    from ikigai_tui.core.command_bus import Pending
    from ikigai_tui.core.compaction.auto import AutoState
    from ikigai_tui.core.compaction.pruned_update import UpdateState
    from collections.abc import Callable
    from ikigai_tui.core.session import Session

OFFLINE = "offline"
EXTRACTIVE_MIN_CHARS = 2_000
EXTRACTIVE_MAX_CHARS = 40_000


class Compactor:
    def __init__(self, session: Session) -> None:
        self.session = session
        self.running: set[str] = set()  # agents being compacted now
        self.auto_state: dict[str, AutoState] = {}
        # auto_compact = "ask": who shows the preview (the TUI sets it); None: nobody can
        # be asked (headless), so it is applied as `run` applies a /compact.
        self.reviewer: Callable[[Pending], None] | None = None
        # Summaries of pruned turns (pruned.py, pruned_update.py): the agents whose summary
        # is being made, their failures, and which summary each one sends.
        self.pruning: set[str] = set()
        self.pruned_state: dict[str, UpdateState] = {}
        self.pruned: PrunedSummaries = session.contexts.pruned  # the one the planner sends

    @property
    def settings(self) -> CompactionSettings:
        return self.session.settings.compaction

    def summary_model(self, agent: AgentRuntime) -> str:
        return self.settings.model or self.session.model_of(agent)

    def summariser(self, model: str, reply_tokens: int = REPLY_TOKENS) -> Summariser:
        session = self.session
        ready = getattr(session.providers, "ready", None)
        if ready is not None and (problem := ready(model)):
            raise CommandError(problem)
        counter = TokenCounter(model, session.factors.get(model, (1.0, 0))[0])
        return Summariser(session.gateway, model, input_limit=session.providers.limits(model).input,
                          count=lambda text: counter.text(text) * counter.factor,
                          concurrency=self.settings.concurrency,
                          piece_tokens=self.settings.piece_tokens, reply_tokens=reply_tokens)

    async def propose(self, c: CommandContext, ask: CompactArgs) -> CompactProposal:
        """Summarise what `ask` picks; the proposal of the change (nothing written)."""
        agent, r = c.agent, c.replayer
        keep = self.settings.keep if ask.keep is None else ask.keep
        upto = c.resolve_mark(ask.upto) if ask.upto is not None else None
        from_ = c.resolve_mark(ask.from_) if ask.from_ is not None else None
        keys = select(r, keep, upto, from_)
        if not keys or (len(keys) == 1 and r.ctx[keys[0]][1] == "summary"):
            raise nothing_to_compact(keep, ask.upto, ask.from_)
        if agent.id in self.running:
            raise CommandError("a compaction of this agent is already running")
        if agent.id in self.pruning:
            raise CommandError("a summary of this agent's pruned turns is being made; try "
                               "again when it is done")
        meter = c.services.meter(agent)
        counter = meter.counter
        model = self.summary_model(agent)
        if model != OFFLINE:
            model = self.session.check_model(model)  # a bad name: one line, nothing written
        same = model == counter.model
        bodies = c.services.bodies  # the text, read from the log (the replay holds outlines)
        full = r.ctx if bodies is None else await bodies.entries(r, keys, cache=False)
        entries = [(k, full[k]) for k in keys if k in full]
        sizes = [meter.cache.get(k) or counter.message(e[1], e[2]) for k, e in entries]
        candidates = [Candidate(k, e[1], message_text(e[1], e[2]), size if same else None)
                      for (k, e), size in zip(entries, sizes)]
        replaced = counter.scale(sum(sizes))
        self.running.add(agent.id)
        try:
            summary = await self._summarise(agent.id, model, candidates, ask.focus, replaced)
        except ProviderError as exc:
            raise CommandError(f"{exc}; nothing was changed") from None
        finally:
            self.running.discard(agent.id)
        if summary.usage is not None:
            c.add("usage", {"model": model, "purpose": "compact",
                            "input_tokens": summary.usage.input_tokens,
                            "output_tokens": summary.usage.output_tokens})
        w = await c.services.measure(agent.id)
        items = tuple(ProposalItem(k, e[1], _first_line(e[1], e[2]), counter.scale(size))
                      for (k, e), size in zip(entries, sizes))

        def count(text: str) -> int:
            return counter.scale(counter.message("summary", {"content": text}))

        return CompactProposal(tuple(keys), items, summary.text, w.tokens + w.outside, replaced,
                               summary.model, count, summary.extractive, ask.focus,
                               summary.pieces, ask.dry_run, c.source == "auto")

    async def _summarise(self, agent_id: str, model: str, candidates: list[Candidate],
                         focus: str | None, replaced: int) -> Summary:
        if model == OFFLINE:
            budget = min(EXTRACTIVE_MAX_CHARS, max(EXTRACTIVE_MIN_CHARS, replaced * 4 // 3))
            return extractive_summary(candidates, focus, budget)
        summariser = self.summariser(model)
        notify = self.session.notify

        def progress(done: int, total: int) -> None:
            notify(CompactingNotice(agent_id, done, total, model))

        return await summariser.summarise(candidates, focus, progress=progress)

    def user_acted(self, agent_id: str) -> None:
        """The user compacted by hand: a stopped auto-compaction may try again."""
        state = self.auto_state.get(agent_id)
        if state is not None:
            state.failures = 0

    async def after_turn(self, agent: AgentRuntime) -> None:
        """The automatic policies, once the agent's turn has ended: auto-compaction
        (auto.py), then the summary of the pruned turns (pruned_update.py)."""
        from ikigai_tui.core.compaction.auto import after_turn
        from ikigai_tui.core.compaction.pruned_update import after_turn as summarise_pruned

        await after_turn(self, agent)
        await summarise_pruned(self, agent)  # after any compaction, never during it
