"""The session's compaction service: proposals for /compact, and the automatic policy.

One compaction of an agent at a time, whoever asked (the user's /compact or the policy):
a second one is refused while the first is summarising.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.notices import CompactingNotice
from ikigai_tui.core.compaction import CompactionSettings
from ikigai_tui.core.compaction.proposal import CompactProposal
from ikigai_tui.core.compaction.select import CompactArgs, nothing_to_compact, select
from ikigai_tui.core.compaction.pruned import PrunedSummaries, Sent
from ikigai_tui.core.compaction.summarise import (
    REPLY_TOKENS, Summariser, Summary, extractive_summary,
)
from ikigai_tui.core.events import message_text
from ikigai_tui.core.matching import Candidate
from ikigai_tui.core.commands.proposals import ProposalItem, first_text
from ikigai_tui.core.provider import ProviderError
from ikigai_tui.core.tokens.counter import TokenCounter

if TYPE_CHECKING:
    from ikigai_tui.core.agents import AgentRuntime
    from ikigai_tui.core.commands.context import CommandContext
    from ikigai_tui.core.commands.bus import Pending
    from ikigai_tui.core.agents import AgentTree
    from ikigai_tui.core.replay.bodies import Bodies
    from ikigai_tui.core.commands.parse import CommandResult
    from ikigai_tui.core.events import Event, WriteBatch
    from ikigai_tui.core.gateway import Gateway
    from ikigai_tui.core.models import ModelPolicy
    from ikigai_tui.core.notices import Notice
    from ikigai_tui.core.commands.proposals import Verdict
    from ikigai_tui.core.replay.replayer import Replayer
    from ikigai_tui.core.tokens.window import ContextMeter, Window

OFFLINE = "offline"
EXTRACTIVE_MIN_CHARS = 2_000
EXTRACTIVE_MAX_CHARS = 40_000


@dataclass
class AutoState:
    """Auto-compaction's state of one agent (auto.py)."""

    warned: bool = False  # above compact_warn since the last crossing
    armed: bool = True  # may compact: cleared by a compaction, set again below compact_at
    failures: int = 0  # in a row


@dataclass
class UpdateState:
    """The pruned turns' summary's state of one agent (pruned_update.py)."""

    failures: int = 0  # in a row
    acted: tuple = ()  # what the context was when it stopped: a change means the user acted


class PlannedWindow(Protocol):
    """What the summary of the pruned turns reads of a request plan (core/context.py's
    Plan): its window, and the summary it sends."""

    window: Window
    pruned: Sent | None


class CompactionHost(Protocol):
    """What compaction uses (the session answers it): the model policy and token factors,
    the gateway, the agents, their contexts and message text, measuring and planning,
    committing, telling, and the command path (auto-compaction proposes a /compact)."""

    models: ModelPolicy
    factors: dict[str, tuple[float, int]]
    gateway: Gateway
    tree: AgentTree
    bodies: Bodies

    def notify(self, notice: Notice) -> None: ...

    async def replayer(self, agent_id: str) -> Replayer: ...

    async def plan(self, agent_id: str, *, messages: bool = False) -> PlannedWindow: ...

    async def measure(self, agent_id: str) -> Window: ...

    def meter(self, agent: AgentRuntime) -> ContextMeter: ...

    async def commit(self, batch: WriteBatch) -> list[Event]: ...

    async def propose(self, agent_id: str, text: str, source: str = ...) -> CommandResult | Pending: ...

    async def answer(self, pending: Pending, verdict: Verdict) -> CommandResult: ...


class Compactor:
    """/compact's proposals and the state of the automatic policies (auto.py,
    pruned_update.py; after_turn.py runs them), over a CompactionHost."""

    def __init__(self, host: CompactionHost, *, pruned: PrunedSummaries,
                 policy: Callable[[], CompactionSettings]) -> None:
        self.host = host
        self.policy = policy  # read at each use: the settings may be replaced meanwhile
        self.running: set[str] = set()  # agents being compacted now
        self.auto_state: dict[str, AutoState] = {}
        # auto_compact = "ask": who shows the preview (the TUI sets it); None: nobody can
        # be asked (headless), so it is applied as `run` applies a /compact.
        self.reviewer: Callable[[Pending], None] | None = None
        # Summaries of pruned turns (pruned.py, pruned_update.py): the agents whose summary
        # is being made, their failures, and which summary each one sends.
        self.pruning: set[str] = set()
        self.pruned_state: dict[str, UpdateState] = {}
        self.pruned = pruned  # the one the planner sends

    @property
    def settings(self) -> CompactionSettings:
        return self.policy()

    def summary_model(self, agent: AgentRuntime) -> str:
        return self.settings.model or self.host.models.model_of(agent)

    def summariser(self, model: str, reply_tokens: int = REPLY_TOKENS) -> Summariser:
        host = self.host
        if problem := host.models.ready(model):
            raise CommandError(problem)
        counter = TokenCounter(model, host.factors.get(model, (1.0, 0))[0])
        return Summariser(host.gateway, model, input_limit=host.models.limits(model).input,
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
            model = self.host.models.check(model)  # a bad name: one line, nothing written
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
        items = tuple(ProposalItem(k, e[1], first_text(e[1], e[2]), counter.scale(size))
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
        notify = self.host.notify

        def progress(done: int, total: int) -> None:
            notify(CompactingNotice(agent_id, done, total, model))

        return await summariser.summarise(candidates, focus, progress=progress)

    def user_acted(self, agent_id: str) -> None:
        """The user compacted by hand: a stopped auto-compaction may try again."""
        state = self.auto_state.get(agent_id)
        if state is not None:
            state.failures = 0
