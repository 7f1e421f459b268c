"""/history: every context change of the agent, oldest first: who made it (you, the LLM, the
program), when, what (the command), and the context's size just before and after it; which
ones are undone and by what. `/undo --to ID` (core/handlers/undo.py) takes the context back
to just before one of them.

The sizes are what the context held at the time: the agent's own history is replayed once,
step by step (off the event loop for a long log), so a change later undone still shows what
it did when it was made.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from ikigai_tui.core.commands.context import CommandContext
from ikigai_tui.core.commands.parse import CommandResult
from ikigai_tui.core.errors import UsageError
from ikigai_tui.core.agents import AgentTree
from ikigai_tui.core.events import CONTEXT_MESSAGE_KINDS, UNDOABLE_KINDS, Event, EventRow
from ikigai_tui.core.replay.rows import KIND_CODES
from ikigai_tui.core.times import when
from ikigai_tui.core.handlers.undo import THREAD_ROWS, command_text, quote
from ikigai_tui.core.replay.replayer import Replayer
from ikigai_tui.core.replay.queries import Snapshot

SHOWN = 20  # changes listed without --all
WHO = {"human": "you", "llm": "the LLM"}


@dataclass(frozen=True)
class Change:
    """One context change of an agent, as /history lists it."""

    id: int
    kind: str
    text: str  # the command that made it
    who: str  # "you", "the LLM" or "the program" (an automatic compaction, say)
    before: int  # messages in the context just before it
    after: int  # and just after it
    undone_by: int | None  # the undo event that reversed it, if any
    created_at: float | None = None
    call: int | None = None  # the LLM's tool call that asked for it (a filter_context apply)


def _who(history: list[EventRow], index: int) -> str:
    """Who made history[index]: the `source` of the command record of its write."""
    for j in range(index - 1, max(-1, index - 4), -1):
        kind = history[j][1]
        if kind == "command":
            return WHO.get(str(history[j][2].get("source")), "you")
        if kind in UNDOABLE_KINDS or kind in CONTEXT_MESSAGE_KINDS or kind == "undo":
            break
    return "the program"


def changes_of(rows: list[EventRow], base: Snapshot) -> list[Change]:
    """The agent's context changes in `rows` (its own history), replayed step by step."""
    undone_by = {payload["target"]: key for key, kind, payload in rows if kind == "undo"}
    r = Replayer(base)
    found: list[Change] = []
    for index, row in enumerate(rows):
        key, kind, payload = row
        if kind not in UNDOABLE_KINDS:
            r.apply(row)
            continue
        before = len(r.ctx)
        r.apply(row)
        found.append(Change(key, kind, command_text(rows, index), _who(rows, index), before,
                            len(r.ctx), undone_by.get(key), call=payload.get("call")))
    return found


async def history(c: CommandContext) -> CommandResult:
    every = False
    while (word := c.args.peek_word()) is not None and word.startswith("--"):
        c.args.take()
        if word != "--all":
            raise UsageError(f"unknown option '{word}' (/history [--all])")
        every = True
    c.args.done()
    rows = list(c.replayer.history)
    if len(rows) < THREAD_ROWS:
        changes = changes_of(rows, c.replayer.base)
    else:
        changes = await asyncio.to_thread(changes_of, rows, c.replayer.base)
    if not changes:
        return CommandResult(["No context change yet: /clear, /rewind, /forget, /remember, "
                              "/restore, /compact, /pin, /unpin and /budget are listed here."],
                             data=[])
    shown = changes if every else changes[-SHOWN:]
    stamps = await _stamps(c, shown)
    shown = [Change(**{**ch.__dict__, "created_at": stamps.get(ch.id)}) for ch in shown]
    lines = [f"Context changes of {c.tree.label(c.agent.id)}, oldest first "
             f"({len(changes):,}; /undo --to ID takes the context back to just before one):"]
    if len(shown) < len(changes):
        lines.append(f"  ... {len(changes) - len(shown):,} older (/history --all)")
    lines += [_line(ch) for ch in shown]
    return CommandResult(lines, data=shown)


async def _stamps(c: CommandContext, shown: list[Change]) -> dict[int, float]:
    """When each change was made, read in one page of the log."""
    page = c.services.page
    if page is None or not shown:
        return {}
    kinds = sorted({ch.kind for ch in shown})
    found = await page(c.agent.id, kinds, after=shown[0].id - 1, limit=len(shown) * 4 + 10)
    return {e.id: e.created_at for e in found}


def _line(ch: Change) -> str:
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(ch.created_at)) if ch.created_at else "?"
    size = (f"{ch.before:,} -> {ch.after:,} messages" if ch.before != ch.after
            else f"{ch.after:,} messages")
    state = f"  (undone by #{ch.undone_by})" if ch.undone_by is not None else ""
    asked = f"  (asked in call #{ch.call})" if ch.call is not None else ""
    return f"  #{ch.id}  {when}  {ch.who:<11} {quote(ch.text)}  · {size}{state}{asked}"


# -- /context's history lines -----------------------------------------------------------------

CHANGING = frozenset({"clear", "rewind", "forget", "remember", "restore", "compact", "pin",
                      "unpin", "budget"})


@dataclass(frozen=True)
class ContextHistory:
    """How the context got where it is, in figures: what /context and `context --json` add."""

    oldest: int | None  # the oldest message in the context
    oldest_at: float | None  # when it was made
    compactions: list[dict]  # each in effect: id, when, tokens before and after, ratio
    pruned_summaries: int  # summaries of turns the window dropped
    restored: int  # messages brought back (/restore, /recall --restore)
    restores: int  # the changes that did
    llm_asked: int  # context changes the LLM asked for
    llm_accepted: int  # of which applied

    def as_dict(self) -> dict:
        return dict(self.__dict__)


async def context_history(r: Replayer, agent_id: str, tree: AgentTree,
                          page: Callable[..., Awaitable[list[Event]]] | None) -> ContextHistory:
    """From the agent's replayed state `r` and, for the times, the log's pages."""
    codes = frozenset(code for kind, code in KIND_CODES.items()
                      if kind in UNDOABLE_KINDS or kind in ("command", "pruned_summary"))
    compactions: list[dict] = []
    pruned = restored = restores = asked = accepted = 0
    asking = False  # the last command record was the LLM's asking for a change
    for key, kind, payload in r.history.of_kinds(codes):
        if kind == "command":
            name = str(payload.get("text") or "").lstrip("/").split(" ", 1)[0]
            asking = payload.get("source") == "llm" and name in CHANGING
            asked += asking
            continue
        if kind == "pruned_summary":
            pruned += 1
            continue
        if asking:
            accepted += 1
            asking = False
        if key in r.undone:
            continue
        if kind == "compact":
            before, after = _tokens(payload.get("before")), _tokens(payload.get("after"))
            ratio = round(before / after, 2) if before and after else None
            compactions.append({"id": key, "messages": len(payload.get("ids", ())),
                                "before": before, "after": after, "ratio": ratio})
        elif (kind == "filter" and payload.get("mode") == "restore"
              or kind == "tool_output" and payload.get("action") == "restore"):
            restores += 1
            restored += len(payload.get("ids", ()))
    oldest = next((k for k in r.ctx if k not in r.summaries), None)
    owners = [a.id for a in reversed(tree.lineage(agent_id))]  # itself, then its ancestors
    stamps = await _event_times(page, owners, [oldest, *(x["id"] for x in compactions)])
    for item in compactions:
        item["at"] = stamps.get(item["id"])
    return ContextHistory(oldest, stamps.get(oldest), compactions, pruned, restored,
                          restores, asked, accepted)


def _tokens(value: object) -> int | None:
    """A size recorded as a count, or as {"tokens": N, ...}; None when neither."""
    if isinstance(value, dict):
        value = value.get("tokens")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


async def _event_times(page: Callable[..., Awaitable[list[Event]]] | None, owners: list[str],
                       ids: list[int | None]) -> dict[int, float]:
    """When each of a few events of an agent (or an ancestor's message) was made."""
    found: dict[int, float] = {}
    if page is None:
        return found
    kinds = sorted(KIND_CODES)
    for key in ids:
        if key is None:
            continue
        for agent in owners:  # an inherited message is an ancestor's event
            events = await page(agent, kinds, after=key - 1, limit=1)
            if events and events[0].id == key:
                found[key] = events[0].created_at
                break
    return found


def history_lines(h: ContextHistory, now: float) -> list[str]:
    """/context's lines on how the context got where it is; none while nothing changed
    it but messages (no compaction, restore, nor change the LLM asked; the window's
    summaries of pruned turns are not changes of the context)."""
    if not (h.compactions or h.restores or h.llm_asked):
        return []
    lines = ["History:"]
    if h.oldest is not None:
        made = f", made {when(h.oldest_at, now)}" if h.oldest_at else ""
        lines.append(f"  oldest message    #{h.oldest}{made}")
    if h.compactions:
        shown = "; ".join(
            f"#{x['id']}" + (f" {when(x['at'], now)}" if x.get("at") else "")
            + (f", {x['before']:,} -> {x['after']:,} tokens (ratio {x['ratio']})"
               if x.get("ratio") else "")
            for x in h.compactions[-3:])
        lines.append(f"  compactions       {len(h.compactions):,} in effect: {shown}")
    else:
        lines.append("  compactions       none in effect")
    if h.pruned_summaries:
        lines.append(f"  pruned turns      summarised {h.pruned_summaries:,} times")
    lines.append(f"  restored          {h.restored:,} message{'s' if h.restored != 1 else ''}"
                 + (f" by {h.restores:,} change{'s' if h.restores != 1 else ''}" if h.restores else ""))
    lines.append(f"  the LLM's asks    {h.llm_asked:,} context change"
                 f"{'s' if h.llm_asked != 1 else ''} asked for, {h.llm_accepted:,} applied"
                 " (/history lists every change)")
    return lines
