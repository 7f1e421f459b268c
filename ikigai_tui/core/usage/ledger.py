"""Usage so far: each agent's input and output tokens to date and what they cost, from
its `usage` events (its turns' and its matchers' side requests, as providers reported
them). Prices are dollars per token from the provider factory (litellm's model map, read
as data); a model with no price makes the cost unknown, never a guess.

`UsageLedger` keeps the totals per agent from the agent's replayed history, which only
ever grows: each usage event is read once, however often the totals are asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from ikigai_tui.core.events import EventRow
from ikigai_tui.core.replay.rows import Rows

TIER = 200_000  # input tokens of one request above which tiered prices apply


class Prices(NamedTuple):
    """US dollars per token; some models charge more per request above TIER input tokens."""

    input: float
    output: float
    input_above_tier: float | None = None
    output_above_tier: float | None = None

    def cost(self, input_tokens: int, output_tokens: int, above: bool | None = None) -> float:
        """What requests cost: one request's tokens, or sums of requests all on the same
        side of TIER (`above`)."""
        if above is None:
            above = input_tokens > TIER
        rate_in = self.input_above_tier if above and self.input_above_tier is not None else self.input
        rate_out = (self.output_above_tier if above and self.output_above_tier is not None
                    else self.output)
        return input_tokens * rate_in + output_tokens * rate_out


PriceLookup = Callable[[str], "Prices | None"]


@dataclass(frozen=True)
class UsageTotals:
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0  # dollars, of the priced requests
    unpriced: tuple[str, ...] = ()  # models used that the map has no price for

    @property
    def cost_known(self) -> bool:
        return not self.unpriced

    def cost_text(self) -> str:
        if self.unpriced:
            return f"unknown (no price for {', '.join(self.unpriced)})"
        return format_cost(self.cost)

    def line(self) -> str:
        """`Usage so far: 12,345 tokens in, 678 out; cost $0.0432`."""
        return (f"Usage so far: {self.input_tokens:,} tokens in, {self.output_tokens:,} out; "
                f"cost {self.cost_text()}")

    def as_dict(self) -> dict:
        return {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "cost_usd": round(self.cost, 6) if self.cost_known else None,
                "cost": self.cost_text(), "unpriced_models": list(self.unpriced)}


def format_cost(dollars: float) -> str:
    if dollars == 0:
        return "$0"
    if dollars < 0.01:
        return f"${dollars:.4f}"
    return f"${dollars:,.2f}"


def totals_from_sums(rows: list[tuple[str, str, bool, int, int]],
                     price: PriceLookup) -> dict[str, UsageTotals]:
    """Per agent, from the store's sums (agent, model, above TIER, input, output)."""
    tallies: dict[str, _Tally] = {}
    for agent_id, model, above, given_in, given_out in rows:
        tally = tallies.setdefault(agent_id, _Tally())
        tally.input += given_in
        tally.output += given_out
        prices = price(model) if model else None
        if prices is None:
            tally.unpriced[model or "an unnamed model"] = None
        else:
            tally.cost += prices.cost(given_in, given_out, above)
    return {a: UsageTotals(t.input, t.output, t.cost, tuple(t.unpriced)) for a, t in tallies.items()}


class _Tally:
    __slots__ = ("seen", "input", "output", "cost", "unpriced")

    def __init__(self) -> None:
        self.seen = 0  # rows of the history already read
        self.input = self.output = 0
        self.cost = 0.0
        self.unpriced: dict[str, None] = {}  # in the order first met


class UsageLedger:
    def __init__(self, prices: PriceLookup) -> None:
        self._prices = prices
        self._known: dict[str, Prices | None] = {}
        self._tallies: dict[str, _Tally] = {}

    def price(self, model: str) -> Prices | None:
        if model not in self._known:
            self._known[model] = self._prices(model)
        return self._known[model]

    def totals(self, agent_id: str, history: Sequence[EventRow]) -> UsageTotals:
        tally = self._tallies.get(agent_id)
        if tally is None or tally.seen > len(history):  # a history read afresh
            tally = self._tallies[agent_id] = _Tally()
        rows = history[tally.seen:]
        if isinstance(rows, Rows):  # a replayed history: its usage rows only, found in C
            rows = rows.of_kind("usage")
        for _id, kind, payload in rows:
            if kind != "usage":
                continue
            given_in = int(payload.get("input_tokens") or 0)
            given_out = int(payload.get("output_tokens") or 0)
            tally.input += given_in
            tally.output += given_out
            model = str(payload.get("model") or "")
            prices = self.price(model) if model else None
            if prices is None:
                tally.unpriced[model or "an unnamed model"] = None
            else:
                tally.cost += prices.cost(given_in, given_out)
        tally.seen = len(history)
        return UsageTotals(tally.input, tally.output, tally.cost, tuple(tally.unpriced))
