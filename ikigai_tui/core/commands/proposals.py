"""Proposals: what a command would change, answered by a reviewer before anything is written.

A handler that needs review (/forget, /remember; later /compact and criteria matches)
returns a `Proposal` instead of adding events. The command bus hands it to a reviewer,
which answers with a `Verdict`: accept everything, accept a subset of the items, or
refuse. Only then is anything written: the accepted set exactly (`Proposal.apply`), or,
on refusal, only the command record.

Reviewers today: the TUI's preview modal, headless `run` (prints the preview, applies),
scripts and tests (`accept_all`). How a proposal is shown is one rule, its
`presentation` (a `Presentation`): the TUI opens the dialog of that kind, the headless
front ends (`run`, stream-json) print `printed_preview(proposal)`. The hook for the LLM is the same `Reviewer` type: a
tool such as `filter_context` would run the command with a reviewer that returns the
LLM's own verdict (`Verdict.accept(ids)`), through `Session.command(..., review=...)`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.commands.parse import CommandResult
from ikigai_tui.core.events import message_text

if TYPE_CHECKING:
    from ikigai_tui.core.replay.bodies import Bodies
    from ikigai_tui.core.commands.context import CommandContext
    from ikigai_tui.core.replay.replayer import Replayer
    from ikigai_tui.core.tokens.counter import Resize
    from ikigai_tui.core.tokens.window import ContextMeter

PREVIEW_ROWS = 50  # rows of a printed preview; the rest is summed up in one line


@dataclass(frozen=True)
class Verdict:
    """A reviewer's answer: `ids` None accepts the proposal as made."""

    accepted: bool
    ids: tuple[int, ...] | None = None

    @classmethod
    def accept(cls, ids: list[int] | tuple[int, ...] | None = None) -> Verdict:
        return cls(True, None if ids is None else tuple(sorted(set(ids))))


ACCEPT_ALL = Verdict(True)
REFUSE = Verdict(False)


@dataclass(frozen=True)
class ProposalItem:
    """One message a proposal offers: `chosen` says whether the proposal picks it."""

    id: int
    role: str
    first_line: str
    tokens: int
    chosen: bool = True
    reason: str | None = None  # why the matcher picked it
    exchange: int | None = None  # id of the first message of its exchange
    raw: float = 0.0  # its count unscaled: what the context's size adds up (Resize)


class Presentation(StrEnum):
    """How a proposal is shown before it applies: the one rule every front end asks.
    The TUI opens the dialog of the kind; a front end without dialogs prints the
    preview of any kind but NONE (`printed_preview`)."""

    NONE = "none"  # applied as made, nothing shown: ids the user named (SPEC §5)
    MATCHES = "matches"  # messages to pick from: what a matcher found, or ids under --preview
    SUMMARY = "summary"  # a compaction: the summary, what it replaces, the saving
    RESTORE = "restore"  # messages out of the context to bring back (--preview)
    MEMORY = "memory"  # a change to a memory file, as a diff


class Proposal:
    """Base of every proposal. `dry_run`: show it, write only the command record."""

    dry_run: bool = False

    @property
    def presentation(self) -> Presentation:
        """How it is shown before it applies (each kind of proposal says)."""
        raise NotImplementedError

    def preview_lines(self) -> list[str]:
        raise NotImplementedError

    def apply(self, c: CommandContext, verdict: Verdict) -> CommandResult:
        """Add the accepted change to c.batch; return what to say."""
        raise NotImplementedError


Reviewer = Callable[[Proposal], Awaitable[Verdict]]


async def accept_all(_proposal: Proposal) -> Verdict:
    return ACCEPT_ALL


def printed_preview(proposal: Proposal) -> list[str]:
    """What a front end without dialogs (`run`, stream-json) shows of a proposal before
    it applies it: its preview, unless it is one shown to nobody (Presentation.NONE)."""
    if proposal.presentation is Presentation.NONE:
        return []
    return proposal.preview_lines()


def first_text(kind: str, payload: dict) -> str:
    """A message's first line that is not blank."""
    for line in message_text(kind, payload).splitlines():
        if line.strip():
            return line.strip()
    return ""


def _exchange_starts(replayer: Replayer) -> dict[int, int]:
    """Each context message's exchange: the id of the user message that opened it."""
    starts: dict[int, int] = {}
    current: int | None = None
    for key, entry in replayer.ctx.items():
        if entry[1] == "user" or current is None:
            current = key
        starts[key] = current
    return starts


def _with_closing(payload: dict, r: Replayer, call: int) -> None:
    """At the end of the turn: what the turn added after the LLM's filter_context apply
    call (its result, the closing reply) leaves with the planning conversation."""
    later = [k for k in r.ctx if k > call and k not in payload["ids"]]
    if not later:
        return
    payload["ids"] = sorted([*payload["ids"], *later])
    payload["planning"] = sorted([*payload["planning"], *later])
    gone = len(r.filter_removes("forget", payload["ids"]))
    payload["before"]["messages"] = len(r.ctx)
    payload["after"]["messages"] = len(r.ctx) - gone


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def some_ids(ids: Sequence[int], most: int = 20) -> str:
    """Ids as a line shows them: "#7, #8", the first `most` and " ..." past them."""
    return ", ".join(f"#{i}" for i in ids[:most]) + (" ..." if len(ids) > most else "")


@dataclass(frozen=True)
class FilterProposal(Proposal):
    """/forget (mode forget: the chosen items leave the context) or /remember (mode
    remember: only the chosen items stay). Items are the messages offered: for forget
    the ones asked for with their tool-call partners, for remember the whole context."""

    mode: str
    ids: tuple[int, ...]  # as asked
    items: tuple[ProposalItem, ...]
    tokens_before: int
    dry_run: bool = False
    criteria: str | None = None  # what the user described (None: ids given with --ids)
    matcher: str | None = None  # which matcher found the ids
    dropped: int = 0  # ids the matcher named that were not in the context
    # The planning conversation of the LLM's filter_context (its request through the
    # apply call): it leaves the context with the filtered messages, in the same event.
    planning: tuple[int, ...] = ()
    review: bool = False  # explicit ids shown for review first (--preview); others apply at once
    resize: Resize | None = None  # the context's size after, as measured then
    # A change the agent's LLM asks for (core/tools/context_review.py): the agent's name
    # as shown (the dialog's title says whose LLM asks), and, for its /clear or /rewind,
    # the event written when accepted whole with its words (an edited one is a forget of
    # the ticked ids).
    asked_by: str | None = None
    change: tuple[str, dict, str] | None = None  # (kind, payload, the result's line)
    context_messages: int = 0  # the context's messages when it was made
    # Ids the matcher is less sure of: listed unticked, never applied unless ticked.
    possible: tuple[int, ...] = ()
    # The LLM's tool call (filter_context apply, or the slash tool's clear or rewind; its
    # tool_call event's id) this change answers: the change is written when the turn ends,
    # after the call's result, so the result names the call, and the event records it
    # (`call`) for /history and the log.
    call: int | None = None

    @staticmethod
    def listed(mode: str, ids: list[int], replayer: Replayer,
               possible: list[int] | tuple[int, ...] = ()) -> list[int]:
        """The messages a proposal lists: those asked for and the possible ones with their
        partners (forget), or the whole context (remember)."""
        if mode == "forget":
            partners = replayer.with_partners(set(ids) | set(possible))
            return [k for k in replayer.ctx if k in partners]
        return list(replayer.ctx)

    @classmethod
    async def make(cls, bodies: Bodies | None, mode: str, ids: list[int], replayer: Replayer,
                   meter: ContextMeter, tokens_before: int, **options: Any) -> FilterProposal:
        """`build`, with the listed messages' text read from the log (`bodies`)."""
        full = None
        if bodies is not None:
            listed = cls.listed(mode, ids, replayer, options.get("possible", ()))
            full = await bodies.entries(replayer, listed, cache=False)
        return cls.build(mode, ids, replayer, meter, tokens_before, full=full, **options)

    @classmethod
    def build(cls, mode: str, ids: list[int], replayer: Replayer, meter: ContextMeter,
              tokens_before: int, *, dry_run: bool = False, criteria: str | None = None,
              matcher: str | None = None, reasons: dict[int, str | None] | None = None,
              dropped: int = 0, review: bool = False,
              full: Mapping[int, tuple] | None = None,
              possible: list[int] | tuple[int, ...] = ()) -> FilterProposal:
        partners = replayer.with_partners(set(ids))
        picked = set(ids) | partners
        possible = tuple(i for i in possible if i in replayer.ctx and i not in picked)
        keys = cls.listed(mode, ids, replayer, possible)
        chosen = set(ids) | partners
        counter = meter.counter
        counted = meter.cache
        reasons = reasons or {}
        starts = _exchange_starts(replayer)
        entries = replayer.ctx if full is None else full
        items = []
        for key in keys:
            _seq, kind, payload = entries[key]
            raw = counted.get(key)
            if raw is None:
                raw = counter.message(kind, payload)
            items.append(ProposalItem(key, kind, first_text(kind, payload), counter.scale(raw),
                                      key in chosen, reasons.get(key), starts.get(key), raw))
        return cls(mode, tuple(ids), tuple(items), tokens_before, dry_run, criteria, matcher,
                   dropped, review=review, resize=meter.resize(tokens_before),
                   context_messages=len(replayer.ctx), possible=possible)

    @property
    def title(self) -> str:
        if self.asked_by is not None:
            return f"The LLM of {self.asked_by} asks to {self.asked_for}: untick what stays"
        return ("Forget" if self.mode == "forget" else "Remember only") + ": review the messages"

    @property
    def asked_for(self) -> str:
        """What the LLM asks for, in a few words (the title of its review)."""
        if self.change is None:
            return "forget messages" if self.mode == "forget" else "keep only some messages"
        kind, payload, _line = self.change
        if kind == "clear":
            return "clear the context"
        mark = payload.get("mark")
        return f"rewind to '{mark}'" if mark else "rewind to the checkpoint"

    @property
    def presentation(self) -> Presentation:
        """What a matcher found is shown; ids the user named apply at once (SPEC §5)
        unless --preview asks to see them."""
        if self.criteria is None and not self.review:
            return Presentation.NONE
        return Presentation.MATCHES

    def chosen(self, verdict: Verdict = ACCEPT_ALL) -> list[int]:
        """The ids the filter event carries under this verdict: as asked, or as reviewed."""
        if verdict.ids is None:
            return list(self.ids)
        offered = {i.id for i in self.items}
        stray = [i for i in verdict.ids if i not in offered]
        if stray:
            raise CommandError(f"not offered by this preview: {', '.join(map(str, stray[:10]))}")
        return list(verdict.ids)

    def removed(self, verdict: Verdict = ACCEPT_ALL) -> list[ProposalItem]:
        """The offered messages that would leave the context."""
        if verdict.ids is None:
            picked = {i.id for i in self.items if i.chosen}
        else:
            picked = set(self.chosen(verdict))
        if self.mode == "forget":
            return [i for i in self.items if i.id in picked]
        return [i for i in self.items if i.id not in picked]

    def tokens_after(self, verdict: Verdict = ACCEPT_ALL) -> int:
        removed = self.removed(verdict)
        if self.resize is None:
            return max(0, self.tokens_before - sum(i.tokens for i in removed))
        return self.resize.after(-sum(i.raw for i in removed))

    def preview_lines(self) -> list[str]:
        removed = self.removed()
        lines = []
        if self.criteria is not None:
            dropped = (f"; {_plural(self.dropped, 'id')} it named outside the context ignored"
                       if self.dropped else "")
            kept = ([i for i in self.items if i.chosen] if self.mode == "remember" else removed)
            sure = (f" ({len(kept)} likely, {len(self.possible)} possible, left unticked: "
                    f"{some_ids(self.possible)})" if self.possible else "")
            lines.append(f"Matched by {self.matcher}: {_plural(len(kept), 'message')} match "
                         f"\"{self.criteria}\"{sure}{dropped}")
        others = "the others" if self.criteria is None else "the matches"
        verb = "Would forget" if self.mode == "forget" else f"Would keep only {others}, forgetting"
        lines.append(f"{verb} {_plural(len(removed), 'message')}: context "
                     f"{self.tokens_before:,} -> {self.tokens_after():,} tokens")
        for item in removed[:PREVIEW_ROWS]:
            reason = f"  ({item.reason[:80]})" if item.reason else ""
            lines.append(f"  #{item.id}  {item.role}  {item.tokens:,}  {item.first_line[:120]}{reason}")
        if len(removed) > PREVIEW_ROWS:
            lines.append(f"  ... and {len(removed) - PREVIEW_ROWS} more")
        return lines

    def apply(self, c: CommandContext, verdict: Verdict) -> CommandResult:
        if self.change is not None and verdict.ids is None:  # the LLM's /clear or /rewind
            kind, payload, line = self.change
            c.add(kind, payload if self.call is None else payload | {"call": self.call})
            return CommandResult([line])
        chosen = self.chosen(verdict)
        if verdict.ids is not None and not self.removed(verdict):
            # A reviewer that unticks everything meant no change (the modal refuses it).
            raise CommandError("the reviewed selection removes nothing; nothing was written")
        r = c.replayer
        planning = [i for i in self.planning if i in r.ctx]
        if planning:
            # forget lists them with the filtered ids; remember simply does not keep them
            chosen = (sorted(set(chosen) | set(planning)) if self.mode == "forget"
                      else [i for i in chosen if i not in set(planning)])
        removes = r.filter_removes(self.mode, chosen)
        payload: dict = {"mode": self.mode, "ids": chosen}
        if self.criteria is not None:
            payload |= {"criteria": self.criteria, "matcher": self.matcher}
        if planning:
            payload["planning"] = planning
        if self.call is not None:
            payload["call"] = self.call
        payload |= self._record(c, removes)
        c.add("filter", payload)
        if planning and self.mode == "forget":
            c.at_turn_end.append(lambda: _with_closing(payload, r, max(planning)))
        if self.mode == "forget":
            extra = len(removes) - len([i for i in chosen if i in r.ctx])
            note = f" (with {_plural(extra, 'tool-call partner')})" if extra else ""
            return CommandResult([f"Forgot {_plural(len(removes), 'message')}{note}."],
                                 data=payload)
        kept = len(r.ctx) - len(removes)
        return CommandResult([f"Kept {_plural(kept, 'message')}; forgot {len(removes)}."],
                             data=payload)

    def _record(self, c: CommandContext, removes: set[int]) -> dict:
        """What the filter event keeps besides its ids, for /undo, `log` and exports: the
        command that made it, and the context's size before and after (messages and
        tokens of the whole request, as measured when it was reviewed)."""
        r = c.replayer
        first = c.batch.events[0] if c.batch.events else None
        meter = c.services.meter(c.agent)
        counter, counted = meter.counter, meter.cache  # counted when it was measured
        gone = sum(counted[i] if i in counted else counter.message(r.ctx[i][1], r.ctx[i][2])
                   for i in removes)
        resize = self.resize or meter.resize(self.tokens_before)
        record: dict = {
            "before": {"messages": len(r.ctx), "tokens": self.tokens_before},
            "after": {"messages": len(r.ctx) - len(removes), "tokens": resize.after(-gone)},
        }
        if first is not None and first.kind == "command":
            record["command"] = first.payload.get("text", "")
        return record
