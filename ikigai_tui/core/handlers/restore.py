"""Bringing messages back (SPEC §8): `/restore IDS` and `/recall QUERY --restore` write
one `filter` event of mode `restore` (core/replay/replayer.py puts the messages back at their
place in log order, each with its tool-call partner).

Where a message of the lineage stands decides what a restore does with it:
- in the context (pruned by the window or not): nothing, it is there already;
- forgotten, left out, rewound, cleared, or not inherited from an ancestor (written
  before the fork, outside what the fork handed over): it comes back;
- summarised (its summary is in the context): refused, bringing the original back next
  to its summary would say the same thing twice; undoing the compaction brings it back;
- an ancestor's message written after this agent was forked: not of its lineage.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ikigai_tui.core.replay.bodies import outline
from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.errors import UsageError
from ikigai_tui.core.commands.parse import CommandResult, IdRange, parse_id_ranges
from ikigai_tui.core.events import CONTEXT_MESSAGE_KINDS, Event, message_text
from ikigai_tui.core.commands.proposals import ACCEPT_ALL, Presentation, Proposal, ProposalItem, Verdict
from ikigai_tui.core.replay.queries import removal_label

if TYPE_CHECKING:
    from ikigai_tui.core.agents import AgentRuntime
    from ikigai_tui.core.commands.context import CommandContext
    from ikigai_tui.core.tokens.counter import Resize

IN, OUT, SUMMARISED, FOREIGN = "in", "out", "summarised", "foreign"
MOST = 2000  # messages one /restore may name
SHOWN = 20  # restored messages listed one a line
KINDS = tuple(sorted(CONTEXT_MESSAGE_KINDS))


@dataclass(frozen=True)
class Standing:
    state: str  # in words, as /recall shows it
    status: str  # IN, OUT (restorable), SUMMARISED or FOREIGN


async def standings(c: CommandContext, events: list[Event]) -> list[Standing]:
    """Where each message of the lineage stands for this agent."""
    r = c.replayer
    window = await c.services.measure(c.agent.id)
    messages = [k for k in r.ctx if k not in r.summaries]
    pruned = set(messages[:window.start_index])
    covered = set(messages[:window.pruned_covered])  # by the pruned turns' summary sent
    chain = c.tree.lineage(c.agent.id)
    labels = {a.id: c.tree.label(a.id) for a in chain}
    bounds = _bounds(chain)
    summarised = {i for s in r.summaries for i in r.ctx[s][2].get("replaced", ())}
    out = []
    for event in events:
        key = event.id
        if key in r.ctx:
            out.append(Standing("pruned by the window (summarised, not sent verbatim)"
                                if key in covered else "pruned by the window (not sent)"
                                if key in pruned else "in the context", IN))
            continue
        removal = r.removal(key)
        if (removal is not None and removal[1] == "compact") or key in summarised:
            out.append(Standing("summarised", SUMMARISED))
        elif removal is not None:
            out.append(Standing(removal_label(removal[1], removal[2]), OUT))
        elif event.agent_id == c.agent.id:
            out.append(Standing("not in the context", OUT))
        elif bounds.get(event.agent_id) is not None and key >= bounds[event.agent_id]:
            where = labels.get(event.agent_id, event.agent_id)
            out.append(Standing(f"not inherited (in {where}, after the fork)", FOREIGN))
        else:
            out.append(Standing(f"not inherited (in {labels.get(event.agent_id, event.agent_id)})",
                                OUT))
    return out


def _bounds(chain: list[AgentRuntime]) -> dict[str, int | None]:
    """Each ancestor's first event that is not of the lineage: the fork of the next."""
    return {agent.id: chain[i + 1].fork_event_id for i, agent in enumerate(chain[:-1])}


async def lineage_messages(c: CommandContext, parts: list[IdRange]) -> list[Event]:
    """The messages of this agent and its ancestors an id list names, in log order: a
    single id must be one of them, a range must hold at least one."""
    page = c.services.page
    if page is None:
        raise CommandError("reading the log is not available here")
    chain = c.tree.lineage(c.agent.id)
    found: dict[int, Event] = {}
    missing, empty = [], []
    for part in parts:
        hits = 0
        for agent in chain:
            events = await page(agent.id, KINDS, after=part.lo - 1,
                                limit=1 if part.single else MOST + 1)
            for event in events:
                if event.id > part.hi:
                    break
                found[event.id] = event
                hits += 1
            if len(found) > MOST:
                raise UsageError(f"too many messages named (at most {MOST:,} at once)")
        if not hits:
            (missing if part.single else empty).append(str(part))
    if missing or empty:
        problems = []
        if missing:
            problems.append(f"not a message of this agent or its ancestors: {_listed(missing)}")
        if empty:
            problems.append(f"no message of this agent or its ancestors has an id in {_listed(empty)}")
        raise CommandError("; ".join(problems) + ". /recall QUERY shows the ids.")
    return [found[k] for k in sorted(found)]


def _listed(parts: list[str]) -> str:
    return ", ".join(parts[:10]) + (" ..." if len(parts) > 10 else "")


async def restore(c: CommandContext) -> RestoreProposal | CommandResult:
    """/restore [--dry-run] [--preview] IDS"""
    words = c.args.rest().split()
    flags = {w for w in words if w.startswith("--")}
    unknown = flags - {"--dry-run", "--preview"}
    if unknown:
        raise UsageError(f"unknown option '{sorted(unknown)[0]}'")
    listed = " ".join(w for w in words if not w.startswith("--"))
    if not listed:
        raise UsageError("missing IDS (message ids like 3,5-9)")
    parts = parse_id_ranges(listed)
    r = c.replayer
    cleared = [p.lo for p in parts if p.single and p.lo in r.cleared and p.lo in r.ctx]
    if cleared and len(cleared) == len(parts):  # tool results whose output was cleared
        return _restore_output(c, cleared, dry_run="--dry-run" in flags)
    events = await lineage_messages(c, parts)
    singles = {p.lo for p in parts if p.single}
    states = await standings(c, events)
    refused = [(e, s) for e, s in zip(events, states) if e.id in singles
               and s.status in (SUMMARISED, FOREIGN)]
    if refused:
        raise CommandError(" ".join(_refusal(c, e, s) for e, s in refused[:3]))
    return await propose(c, events, states, dry_run="--dry-run" in flags,
                         review="--preview" in flags)


def _restore_output(c: CommandContext, ids: list[int], *, dry_run: bool) -> CommandResult:
    """Cleared tool results (/forget --tool-results) sent whole again: one `tool_output`
    event (at once: the user named them)."""
    words = f"the output of {_plural(len(ids), 'tool result')} ({', '.join(f'#{i}' for i in ids)})"
    if dry_run:
        return CommandResult([f"Would bring back {words}."], data=[])
    c.add("tool_output", {"action": "restore", "ids": ids})
    return CommandResult([f"Brought back {words}."], data=ids)


def _refusal(c: CommandContext, event: Event, standing: Standing) -> str:
    if standing.status == FOREIGN:
        return (f"#{event.id} was written in {c.tree.label(event.agent_id)} after this agent "
                "was forked: it is not of this agent's lineage.")
    removal = c.replayer.removal(event.id)
    by = f" #{removal[0]}" if removal is not None else ""
    return (f"#{event.id} is summarised (compaction{by}): restoring it would repeat its "
            "summary; /undo that compaction to bring its messages back.")


async def propose(c: CommandContext, events: list[Event], states: list[Standing], *,
                  dry_run: bool = False, review: bool = False, query: str | None = None,
                  exchanges: dict[int, int] | None = None) -> RestoreProposal | CommandResult:
    """The proposal to bring back the restorable ones among `events` (with their tool-call
    partners); a plain answer when none is. `exchanges` (message id -> the id of its
    exchange's question, from /recall) groups the items by exchange; a partner goes with
    the message it comes with."""
    r = c.replayer
    notes = _notes([(e, s) for e, s in zip(events, states) if s.status != OUT])
    back = [(e, s) for e, s in zip(events, states) if s.status == OUT]
    if not back:
        return CommandResult(["Nothing to restore: " + "; ".join(notes[:SHOWN]) + "."
                              if notes else "Nothing to restore."], data=[])
    chosen = {e.id for e, _s in back}
    exchange = dict(exchanges or {})
    partners: dict[int, int] = {}
    extra: list[tuple[Event, Standing]] = []
    for event, _s in back:
        partner = await _partner(c, event)
        if partner is None or partner.id in r.ctx:
            continue
        partners[event.id] = partner.id
        if event.id in exchange:
            exchange.setdefault(partner.id, exchange[event.id])
        if partner.id not in chosen:
            chosen.add(partner.id)
            extra.append((partner, Standing(f"tool-call partner of #{event.id}", OUT)))
    meter = c.services.meter(c.agent)
    counter = meter.counter
    items, outlines = [], {}
    for event, standing in sorted(back + extra, key=lambda es: es[0].id):
        raw = counter.message(event.kind, event.payload)
        items.append(ProposalItem(event.id, event.kind, first_line(event), counter.scale(raw),
                                  True, standing.state, exchange.get(event.id), raw))
        if r.message_row(event.id) is None:  # an ancestor's, from outside the inheritance
            outlines[event.id] = (event.id, event.kind, dict(outline(event.kind, event.payload)))
    tokens_before = (await c.services.measure(c.agent.id)).tokens
    return RestoreProposal(tuple(items), tokens_before, partners, outlines, tuple(notes),
                           frozenset(e.id for e, _s in back), dry_run=dry_run, review=review,
                           query=query, resize=meter.resize(tokens_before))


def _notes(pairs: list[tuple[Event, Standing]]) -> list[str]:
    """The hits that do not come back, grouped by why."""
    groups: dict[str, list[str]] = {}
    for event, standing in pairs:
        if standing.status == IN:
            why = ("already in the context" if standing.state == "in the context" else
                   f"already in the context, {standing.state}")
        elif standing.status == SUMMARISED:
            why = "summarised (undo the compaction to bring them back)"
        else:
            why = f"not of this agent's lineage ({standing.state})"
        groups.setdefault(why, []).append(f"#{event.id}")
    return [f"{why}: {_listed(ids)}" for why, ids in groups.items()]


async def _partner(c: CommandContext, event: Event) -> Event | None:
    """The tool call of a result, or the result of a call, from the log."""
    page = c.services.page
    if page is None or event.kind not in ("tool_call", "tool_result"):
        return None
    if event.kind == "tool_result":
        call = event.payload.get("call_event")
        if not isinstance(call, int):
            return None
        found = await page(event.agent_id, ["tool_call"], after=call - 1, limit=1)
        return found[0] if found and found[0].id == call else None
    known = c.replayer.result_of.get(event.id)
    after = event.id if known is None else known - 1
    for agent in c.tree.lineage(c.agent.id)[::-1]:
        for found in await page(agent.id, ["tool_result"], after=after, limit=20):
            if found.payload.get("call_event") == event.id:
                return found
    return None


def first_line(event: Event, most: int = 80) -> str:
    text = " ".join(message_text(event.kind, event.payload).split())
    return text if len(text) <= most else text[: most - 1] + "…"


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


@dataclass(frozen=True)
class RestoreProposal(Proposal):
    """Messages out of the context offered to come back (all ticked); `partners` maps a
    message to its tool-call partner (which comes with it), `outlines` holds what replay
    needs of an ancestor's message it never had (it travels in the event)."""

    items: tuple[ProposalItem, ...]
    tokens_before: int
    partners: dict[int, int] = field(default_factory=dict)
    outlines: dict[int, tuple] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    asked: frozenset[int] = frozenset()  # the messages asked for (the others are partners)
    dry_run: bool = False
    review: bool = False  # shown for review first (/restore --preview)
    query: str | None = None  # the /recall it came from
    resize: Resize | None = None  # the context's size after, as measured then

    @property
    def title(self) -> str:
        return "Recall: bring messages back" if self.query else "Restore: bring messages back"

    @property
    def presentation(self) -> Presentation:
        """Applied at once (the user named them), unless --preview asks to see them."""
        return Presentation.RESTORE if self.review else Presentation.NONE

    def chosen(self, verdict: Verdict = ACCEPT_ALL) -> list[int]:
        """The ids the event carries: the ticked ones with their partners."""
        offered = {i.id for i in self.items}
        if verdict.ids is None:
            picked = set(offered)
        else:
            stray = [i for i in verdict.ids if i not in offered]
            if stray:
                raise CommandError(f"not offered by this preview: {', '.join(map(str, stray[:10]))}")
            picked = set(verdict.ids)
        picked |= {self.partners[i] for i in picked if i in self.partners}
        # A partner ticked alone brings the message it belongs to.
        picked |= {m for m, p in self.partners.items() if p in picked}
        return sorted(picked)

    def tokens_after(self, ids: list[int]) -> int:
        wanted = set(ids)
        back = [i for i in self.items if i.id in wanted]
        if self.resize is None:
            return self.tokens_before + sum(i.tokens for i in back)
        return self.resize.after(sum(i.raw for i in back))

    def preview_lines(self) -> list[str]:
        ids = self.chosen()
        lines = [f"Would bring back {_plural(len(ids), 'message')}: context "
                 f"{self.tokens_before:,} -> {self.tokens_after(ids):,} tokens"]
        lines += self._rows(ids)
        return lines + [f"  ({note})" for note in self.notes[:SHOWN]]

    def _rows(self, ids: list[int]) -> list[str]:
        wanted = set(ids)
        shown = [i for i in self.items if i.id in wanted]
        lines = [f"  #{i.id}  {i.role}  {i.tokens:,}  {i.first_line[:120]}  ({i.reason})"
                 for i in shown[:SHOWN]]
        if len(shown) > SHOWN:
            lines.append(f"  ... and {len(shown) - SHOWN} more")
        return lines

    def apply(self, c: CommandContext, verdict: Verdict) -> CommandResult:
        ids = self.chosen(verdict)
        if not ids:
            raise CommandError("the reviewed selection restores nothing; nothing was written")
        r = c.replayer
        payload: dict = {"mode": "restore", "ids": ids}
        rows = [list(self.outlines[i]) for i in ids if i in self.outlines]
        if rows:
            payload["rows"] = rows
        after = self.tokens_after(ids)
        record: dict = {"before": {"messages": len(r.ctx), "tokens": self.tokens_before},
                        "after": {"messages": len(r.ctx) + len(ids), "tokens": after}}
        first = c.batch.events[0] if c.batch.events else None
        if first is not None and first.kind == "command":
            record["command"] = first.payload.get("text", "")
        c.add("filter", payload | record)
        extra = len([i for i in ids if i not in self.asked])
        note = f" (with {_plural(extra, 'tool-call partner')})" if extra > 0 else ""
        lines = [f"Restored {_plural(len(ids), 'message')}{note}: context "
                 f"{self.tokens_before:,} -> {after:,} tokens."]
        return CommandResult(lines + self._rows(ids) + [f"  ({n})" for n in self.notes[:SHOWN]],
                             data=ids)
