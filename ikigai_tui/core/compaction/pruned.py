"""Summaries of pruned turns (issue 15 item 3, SPEC §7): which summary an agent sends.

With `summarize_pruned` on, a share of the budget (`summary_reserve`, default 10%) is kept
for a summary of the turns the sliding window has dropped: the window's messages fit the
budget minus that reserve, and the summary, within it, is sent beside the pins (at the end
of the system text, labelled as background). It is made after turns end (pruned_update.py)
and recorded as one `pruned_summary` event per update:

    {"summary": TEXT, "ranges": [[FIRST_ID, LAST_ID], ...], "messages": N, "tokens": T,
     "model": M, "extractive": BOOL, "previous": EVENT_ID | null, "new": K}

It is history only: it never changes the context (the replay ignores it), and it stands
for exactly the messages it covers. The rule that keeps it honest: the agent's latest
summary (its own, or, before it has one, the one its parent sent at the fork) is sent only
if the first N messages of the context are exactly the context's messages whose ids lie in
its ranges, and all N are before the window's start. The ranges are runs of the covered ids
broken wherever a message then out of the context lay between two of them, so a message an
/undo brings back among them breaks the rule too. After /clear, a rewind or /forget or
/compact of covered messages, an /undo that restores one, or a window that now shows some
of them, the summary is not sent (nothing stale is described) and the next turn's end
makes a new one from the pruned messages.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ikigai_tui.core.tokens.limits import format_tokens

if TYPE_CHECKING:
    from ikigai_tui.core.agents import AgentRuntime, AgentTree
    from ikigai_tui.core.replay.bodies import Bodies
    from ikigai_tui.core.replay.replayer import Replayer
    from ikigai_tui.core.tokens.window import ContextMeter

KIND = "pruned_summary"
HEADING = ("Summary of the earlier turns of this conversation, which are no longer shown "
           "verbatim (background: the messages below continue from it):")
CUT_NOTE = "\n[... the rest of this summary is cut to fit its reserve ...]"


@dataclass(frozen=True, slots=True)
class PrunedSummary:
    event_id: int
    agent_id: str  # whose event it is (an ancestor's when inherited at a fork)
    text: str | None  # None when read from an outline (PrunedSummaries.text reads it)
    ranges: tuple[tuple[int, int], ...]
    covered: int  # the context messages it stands for: the first `covered` of the context
    tokens: int  # as counted when it was made
    model: str
    extractive: bool


def from_row(agent_id: str, row: tuple[int, str, dict]) -> PrunedSummary | None:
    """The summary a `pruned_summary` event records; None for a malformed one."""
    payload = row[2]
    try:
        ranges = tuple((int(a), int(b)) for a, b in payload["ranges"])
        covered = int(payload["messages"])
        text = str(payload["summary"]) if "summary" in payload else None
    except (KeyError, TypeError, ValueError):
        return None
    if covered <= 0 or not ranges:
        return None
    return PrunedSummary(row[0], agent_id, text, ranges, covered, int(payload.get("tokens") or 0),
                         str(payload.get("model") or ""), bool(payload.get("extractive")))


def reserve_of(summarize: bool, share: float, budget: int) -> int:
    """Tokens of the budget kept for the summary: 0 when summaries are off or the window
    is (budget 0: nothing is ever pruned)."""
    if not summarize or budget <= 0:
        return 0
    return max(1, int(budget * share))


def ranges_of(ids: Sequence[int], removed: Sequence[int],
              before: Sequence[Sequence[int]] = ()) -> list[list[int]]:
    """Runs of `ids` (ascending), broken wherever an id of `removed` (sorted: messages out
    of the context) lies between two neighbours; continuing the runs `before` (those of
    the ids that come first)."""
    runs: list[list[int]] = [list(r) for r in before]
    for key in ids:
        if runs and bisect_right(removed, runs[-1][1]) == bisect_left(removed, key):
            runs[-1][1] = key
        else:
            runs.append([key, key])
    return runs


def covers_prefix(ranges: Sequence[tuple[int, int]], covered: int, ids: Sequence[int]) -> bool:
    """Whether the first `covered` of `ids` (ascending, as a context's message ids are)
    are exactly those of `ids` in `ranges`: two binary searches a range, whatever the
    number of messages."""
    if covered > len(ids):
        return False
    count = end = 0
    for first, last in ranges:
        lo, hi = bisect_left(ids, first), bisect_right(ids, last)
        if hi > lo:
            count += hi - lo
            end = max(end, hi)
    return count == covered and end == covered


def fit(text: str, reserve: int, count: Callable[[str], int]) -> str:
    """`text` as sent (heading included) within `reserve` tokens: cut when over."""
    if count(block(text)) <= reserve:
        return text
    cut = text
    for _ in range(8):
        size = count(block(cut + CUT_NOTE))
        if size <= reserve or not cut:
            break
        cut = cut[: max(0, int(len(cut) * reserve / size * 0.95) - 1)]
    return cut + CUT_NOTE if cut else ""


def block(text: str) -> str:
    """What is added to the system text for a summary."""
    return f"\n\n{HEADING}\n{text}"


def label(summary: PrunedSummary, tokens: int) -> str:
    """For the rule and notices: "41 earlier messages summarised (1.2K tokens)"."""
    n = summary.covered
    return (f"{n:,} earlier message{'s' if n != 1 else ''} summarised "
            f"({format_tokens(tokens)} tokens{', extractive' if summary.extractive else ''})")


@dataclass(slots=True)
class _Seen:
    replayer: Any = None
    scanned: int = 0
    latest: tuple | None = None  # the agent's own latest pruned_summary row


@dataclass(frozen=True, slots=True)
class Sent:
    """The summary a request holds: as made, as sent (cut to the reserve if need be)."""

    summary: PrunedSummary
    text: str
    raw: float  # its raw count (the block), for the meter's estimate
    tokens: int


class PrunedSummaries:
    """The summaries of one session's agents: the latest of each (read incrementally from
    its events), its validity (cached until the context changes), its count."""

    def __init__(self, tree: AgentTree, replayer: Callable[[str], Awaitable[Replayer]],
                 bodies: Bodies) -> None:
        self.tree = tree
        self.replayer = replayer  # an agent's replayed state, loaded on first use
        self.bodies = bodies
        self._seen: dict[str, _Seen] = {}
        self._inherited: dict[str, PrunedSummary | None] = {}
        self._valid: dict[str, tuple[tuple, bool]] = {}
        self._counts: dict[tuple[int, str, int, float], tuple[str, float]] = {}
        self._texts: dict[int, str] = {}  # by event id: the replay keeps outlines

    async def text(self, summary: PrunedSummary) -> str:
        """The summary's text (read from the log: the replay holds the event's outline)."""
        if summary.text is not None:
            return summary.text
        text = self._texts.get(summary.event_id)
        if text is None:
            payload = (await self.bodies.get([summary.event_id], cache=False)).get(
                summary.event_id, {})
            text = str(payload.get("summary") or "")
            if len(self._texts) >= 16:
                self._texts.clear()
            self._texts[summary.event_id] = text
        return text

    def own_latest(self, agent_id: str, r: Replayer) -> PrunedSummary | None:
        seen = self._seen.get(agent_id)
        if seen is None or seen.replayer is not r:
            seen = self._seen[agent_id] = _Seen(r)
        history = r.history
        if seen.scanned > len(history):
            seen.scanned, seen.latest = 0, None
        for row in history[seen.scanned:]:
            if row[1] == KIND:
                seen.latest = row
        seen.scanned = len(history)
        return None if seen.latest is None else from_row(agent_id, seen.latest)

    async def latest(self, agent: AgentRuntime, r: Replayer) -> PrunedSummary | None:
        """The agent's own latest summary, or the one its parent had at the fork."""
        own = self.own_latest(agent.id, r)
        if own is not None:
            return own
        if agent.parent_id is None or agent.fork_event_id is None:
            return None
        if agent.id not in self._inherited:
            self._inherited[agent.id] = await self._at_fork(agent)
        return self._inherited[agent.id]

    async def _at_fork(self, agent: AgentRuntime) -> PrunedSummary | None:
        tree = self.tree
        child = agent
        while child.parent_id is not None and child.fork_event_id is not None:
            parent = tree[child.parent_id]
            history = (await self.replayer(parent.id)).history
            end = bisect_left(history, child.fork_event_id, key=lambda row: row[0])
            for row in reversed(history[:end]):
                if row[1] == KIND:
                    return from_row(parent.id, row)
            child = parent  # nothing of its own before the fork: what it had inherited
        return None

    async def sent(self, agent: AgentRuntime, r: Replayer, meter: ContextMeter,
                   reserve: int) -> Sent | None:
        """The summary the next request holds, if one stands (see the module's rule)."""
        if reserve <= 0 or meter.start == 0:
            return None
        summary = await self.latest(agent, r)
        if summary is None or summary.covered > meter.start:
            return None
        ids = meter.ids
        key = (summary.event_id, r.changes, id(meter), min(len(ids), summary.covered + 1))
        cached = self._valid.get(agent.id)
        if cached is None or cached[0] != key:
            cached = self._valid[agent.id] = (key, covers_prefix(summary.ranges, summary.covered, ids))
        if not cached[1]:
            return None
        counter = meter.counter
        ckey = (summary.event_id, counter.model, reserve, counter.factor)  # a learned factor: recut
        counted = self._counts.get(ckey)
        if counted is None:
            if len(self._counts) > 256:
                self._counts.clear()
            text = fit(await self.text(summary), reserve, lambda t: counter.scale(counter.text(t)))
            counted = self._counts[ckey] = (text, counter.text(block(text)))
        text, raw = counted
        if not text:
            return None
        return Sent(summary, text, raw, counter.scale(raw))
