"""The context service: what an agent's next request holds, in one call.

`plan(agent_id)` measures the context against the budget (the sliding window, see
window.py) and returns everything a caller needs about the next request: the system
text, pins, summaries, the window's ids, the tokens and their state, and, when asked,
the messages in provider format. The gauge, `/context`, `context --json` and the turn
runner all read the same plan, so what is shown is what is sent.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.compaction.pruned import PrunedSummaries, Sent, block, reserve_of
from ikigai_tui.core.tokens.limits import format_tokens
from ikigai_tui.core.provider import Request
from ikigai_tui.core.replay.request import build_messages, system_text
from ikigai_tui.core.tokens.kept import fill
from ikigai_tui.core.tokens.counter import TokenCounter, encoding_name, learn_factor, tools_text
from ikigai_tui.core.tools import tool_schemas
from ikigai_tui.core.tokens.window import ContextMeter, Window

if TYPE_CHECKING:
    from ikigai_tui.core.agents import AgentRuntime, AgentTree
    from ikigai_tui.core.replay.bodies import Bodies
    from ikigai_tui.core.tokens.limits import Limits
    from ikigai_tui.core.ports import TokenCounts
    from ikigai_tui.core.replay.replayer import Replayer


class MessageTooLong(CommandError):
    """A message that cannot fit the model's input limit: refused before it is written,
    to be shortened (the screen keeps it in the input)."""


@dataclass(slots=True)
class Plan:
    agent_id: str
    model: str
    system: str  # the system prompt with the pins, as sent
    pins: tuple[str, ...]
    summary_ids: list[int]
    window_ids: list[int]  # the messages sent, in order (summaries apart)
    tools: Sequence[dict[str, Any]]
    window: Window  # tokens, their breakdown, budget, limit, state
    raw_estimate: float  # the unscaled count of the request (learns the model's factor)
    messages: list[dict[str, Any]] | None = field(default=None)  # provider format, when asked
    pruned: Sent | None = None  # the summary of the pruned turns sent, if one stands

    @property
    def tokens(self) -> int:
        return self.window.tokens

    @property
    def budget(self) -> int:
        return self.window.budget

    @property
    def limit(self) -> int:
        return self.window.limit

    @property
    def state(self) -> str:
        return self.window.state

    def request(self) -> Request:
        """The streaming request of a turn (the plan must have been made with messages)."""
        assert self.messages is not None, "plan(..., messages=True) builds the messages"
        system = self.system if self.pruned is None else self.system + block(self.pruned.text)
        return Request(self.model, system, self.messages, self.tools)


class AgentModels(Protocol):
    """Which model an agent is on, and the budget of its window (/model and /budget are
    in the agent's log; the configured ones are the session's, which answers both)."""

    def model_of(self, agent: AgentRuntime) -> str: ...

    def budget_of(self, agent: AgentRuntime) -> int: ...


class ModelLimits(Protocol):
    """A model's input limit and the room kept for its reply (the providers know them)."""

    def limits(self, model: str) -> Limits: ...


class PrunedPolicy(Protocol):
    """Whether a summary of the pruned turns is sent, and the share of the budget kept for
    it (the compaction settings have both)."""

    @property
    def summarize_pruned(self) -> bool: ...

    @property
    def pruned_reserve(self) -> float: ...


class Contribution(Protocol):
    """Text a request holds beside the pins (the summary of the pruned turns), fitted to
    the room the window reserves for it; None when there is none."""

    async def sent(self, agent: AgentRuntime, r: Replayer, meter: ContextMeter,
                   reserve: int) -> Sent | None: ...


class ContextService:
    """Plans requests for the agents of a tree; keeps each agent's meter and the learned
    per-model token factors. Handed what it reads, nothing more."""

    def __init__(self, *, tree: AgentTree, replayer: Callable[[str], Awaitable[Replayer]],
                 models: AgentModels, limits: ModelLimits,
                 counts: TokenCounts | None, bodies: Bodies,
                 factors: dict[str, tuple[float, int]], policy: Callable[[], PrunedPolicy],
                 pruned: Contribution | None = None,
                 tools: Callable[[], list[dict]] = tool_schemas) -> None:
        self.tree = tree
        self.replayer = replayer  # an agent's replayed state, loaded on first use
        self.models = models
        self.limits = limits
        self.counts = counts  # where token counts are kept (None: nowhere)
        self.bodies = bodies
        self.factors = factors  # model -> (factor, samples), shared with who persists them
        self.policy = policy  # read at each plan: the settings may be replaced meanwhile
        # The summary of the pruned turns: the compactor writes them, the plan sends one.
        self.pruned = pruned or PrunedSummaries(tree, replayer, bodies)
        # The tools a turn is offered (the built-in ones, and the running MCP servers').
        self.tools = tools
        self._meters: dict[str, ContextMeter] = {}  # agent id -> its meter, for its model

    def meter(self, agent: AgentRuntime) -> ContextMeter:
        model = self.models.model_of(agent)
        meter = self._meters.get(agent.id)
        if meter is None or meter.counter.model != model:
            factor = self.factors.get(model, (1.0, 0))[0]
            meter = self._meters[agent.id] = ContextMeter(TokenCounter(model, factor))
        return meter

    def counted(self, agent: AgentRuntime, model: str, event_id: int, raw: float) -> None:
        """A message counted before it was committed (as event `event_id`): its count is
        kept in the agent's meter for `model`, so it is not counted again."""
        meter = self._meters.get(agent.id)
        if meter is not None and meter.counter.model == model:
            meter.cache.setdefault(event_id, raw)

    def effective_budget(self, agent: AgentRuntime, limits: Limits) -> int:
        """The configured budget, capped to the model's input limit minus the reply's room;
        0 keeps the window off."""
        budget = self.models.budget_of(agent)
        if budget <= 0:
            return 0
        return max(1, min(budget, limits.input - limits.reserve))

    async def plan(self, agent_id: str, *, messages: bool = False) -> Plan:
        """The next request of `agent_id`; prunes whole turns from the front to fit."""
        agent = self.tree[agent_id]
        replayer = await self.replayer(agent_id)
        model = self.models.model_of(agent)
        limits = self.limits.limits(model)
        tools = self.tools()
        meter = self.meter(agent)
        system = system_text(replayer)
        await fill(meter, replayer, self.counts,
                   ("system", system, tools_text(tools), "", "\n".join(replayer.pins)),
                   self.bodies)
        budget = self.effective_budget(agent, limits)
        policy = self.policy()
        reserve = reserve_of(policy.summarize_pruned, policy.pruned_reserve, budget)
        window = meter.measure(replayer, tools, budget, limits.input, reserve)
        ids = meter.window_ids()
        raw = meter.raw_request(replayer, tools)
        pruned = None
        if reserve:  # the summary of the pruned turns, if one stands: beside the pins
            pruned = await self.pruned.sent(agent, replayer, meter, reserve)
            if pruned is not None:
                window = window._replace(pruned_summary=pruned.tokens,
                                         pruned_covered=pruned.summary.covered,
                                         tokens=window.tokens + pruned.tokens)
                raw += pruned.raw
        full = None
        if messages:  # the bodies of the messages sent, and only those
            full = await self.bodies.entries(replayer, [*sorted(replayer.summaries), *ids])
        return Plan(
            agent_id=agent_id, model=model, system=system,
            pins=tuple(replayer.pins), summary_ids=sorted(replayer.summaries), window_ids=ids,
            tools=tools, window=window, raw_estimate=raw,
            messages=build_messages(replayer, ids, full) if messages else None, pruned=pruned,
        )

    async def message_fits(self, agent_id: str, text: str) -> float:
        """Raise MessageTooLong when a user message `text` cannot fit the model's input limit
        even with the window leaving every earlier turn out (or, window off, with the
        whole context); returns the message's raw count for the meter's cache."""
        agent = self.tree[agent_id]
        plan = await self.plan(agent_id)
        meter = self.meter(agent)
        counter = meter.counter
        raw = counter.message("user", {"content": text})
        window = plan.window
        # What stays whatever the window does: system prompt with pins, tools, summaries.
        kept = (window.system + window.tools + window.summaries + window.pruned_summary
                if window.budget else window.tokens)
        need = kept + counter.scale(raw)
        if need <= window.limit:
            return raw
        about = "" if counter.exact else "~"
        over = format_tokens(need - window.limit)
        rest = ("with all earlier messages left out" if window.budget
                else "with the whole context (the window is off; /clear makes room)")
        raise MessageTooLong(
            f"message too long for {plan.model}: {about}{format_tokens(need)} tokens with the "
            f"system prompt and tools, {about}{over} over its {format_tokens(window.limit)} "
            f"input limit {rest}. Shorten it by {about}{over} tokens.")

    def learn(self, model: str, reported: int, raw_estimate: float) -> tuple[float, int] | None:
        """Update the model's token-count correction from a provider's reported usage;
        returns the new (factor, samples) to persist, or None for exact counters."""
        if encoding_name(model) is not None:
            return None
        factor, samples = learn_factor(*self.factors.get(model, (1.0, 0)), reported, raw_estimate)
        self.factors[model] = (factor, samples)
        for meter in self._meters.values():
            if meter.counter.model == model:
                meter.counter.factor = factor
        return factor, samples
