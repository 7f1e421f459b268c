"""Context commands: /clear /mark /rewind /marks /forget /remember /context (/undo: handlers/undo.py)."""

from __future__ import annotations

import time
from bisect import bisect_left, bisect_right
from dataclasses import replace

from ikigai_tui.core.handlers import settings
from ikigai_tui.core.handlers.cwd import workspace_line
from ikigai_tui.core.handlers.entry_ref import mark_at
from ikigai_tui.core.commands.context import CommandContext
from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.errors import UsageError
from ikigai_tui.core.commands.parse import CommandResult, IdRange, check_mark_name
from ikigai_tui.core.handlers.history import context_history, history_lines
from ikigai_tui.core.tokens.limits import limit_words
from ikigai_tui.core.tokens.words import history_line, sent_line
from ikigai_tui.core.handlers.filter import propose_matches, read_filter_args
from ikigai_tui.core.commands.proposals import FilterProposal


async def clear(c: CommandContext) -> CommandResult | FilterProposal:
    name = c.args.take()
    c.args.done()
    if name is None:
        return await _change(c, ("clear", {}, "Context cleared."), list(c.replayer.ctx))
    return await _rewind_to(c, name)


async def _rewind_to(c: CommandContext, name: str) -> CommandResult | FilterProposal:
    mark = await c.resolve_own_mark(name)
    line = "Rewound to last checkpoint." if mark.name is None else f"Rewound to '{mark.name}'."
    leaving = [k for k, e in c.replayer.ctx.items() if e[0] > mark.event_id]
    return await _change(c, ("rewind", {"mark": mark.name, "mark_event": mark.event_id}, line),
                         leaving)


async def _change(c: CommandContext, change: tuple[str, dict, str],
                  leaving: list[int]) -> CommandResult | FilterProposal:
    """A /clear or /rewind: written at once for the user; for the agent's LLM, a proposal
    of what leaves, reviewed first (core/tools/context_review.py), unless nothing does."""
    kind, payload, line = change
    if c.source != "llm" or not leaving:
        c.add(kind, payload)
        return CommandResult([line])
    tokens = (await c.services.measure(c.agent.id)).tokens
    proposal = await FilterProposal.make(c.services.bodies, "forget", leaving, c.replayer,
                                         c.services.meter(c.agent), tokens, review=True)
    return replace(proposal, asked_by=c.services.tree.label(c.agent.id), change=change)


async def mark(c: CommandContext) -> CommandResult:
    name = None if c.args.peek_word() == "--at" else c.args.take()
    at = mark_at(c)
    c.args.done()
    if name is None:
        c.add("mark", {"name": None, **at})
        return CommandResult(["Checkpoint created" + _at_words(at) + "."])
    check_mark_name(name)
    if name.startswith("#"):
        raise UsageError("mark names cannot start with '#'")
    old = c.replayer.find_mark(name)
    c.add("mark", {"name": name, **at})
    if old is not None:
        moved = c.replayer.mark_position(old)
        return CommandResult([f"Checkpoint '{name}' created{_at_words(at)} (moved from position "
                              f"{moved})."])
    return CommandResult([f"Checkpoint '{name}' created{_at_words(at)}."])


def _at_words(at: dict) -> str:
    return f" at #{at['entry']}" if at else ""


async def rewind(c: CommandContext) -> CommandResult:
    name = c.args.take()
    c.args.done()
    if name is not None:
        return await _rewind_to(c, name)
    latest = c.replayer.latest_mark()
    if latest is None:
        raise CommandError("there is no valid mark to rewind to. Set one with /mark [NAME].")
    return await _rewind_to(c, latest.label)


async def marks(c: CommandContext) -> CommandResult:
    c.args.done()
    r = c.replayer
    valid = r.valid_marks()
    if not valid:
        return CommandResult(["No marks."])
    lines = [f"{m.label}  at position {r.mark_position(m)}" + ("  (unnamed)" if m.name is None else "")
             for m in valid]
    return CommandResult(lines, data=[(m.label, r.mark_position(m)) for m in valid])


async def _filter(c: CommandContext, mode: str) -> FilterProposal | CommandResult:
    """A proposal to forget (or keep only) messages, by ids or by criteria through a
    matcher: nothing written until a reviewer accepts it (see core/commands/proposals.py)."""
    if mode == "forget" and c.args.peek_word() == "--tool-results":
        c.args.take()
        from ikigai_tui.core.handlers.tool_results import forget_tool_results

        return await forget_tool_results(c)
    ask = read_filter_args(c.args, mode)
    if ask.ids is not None:
        ids = select_ids(ask.ids, c.replayer.ctx)
        tokens = (await c.services.measure(c.agent.id)).tokens
        return await FilterProposal.make(c.services.bodies, mode, ids, c.replayer,
                                         c.services.meter(c.agent), tokens,
                                         dry_run=ask.dry_run, review=ask.preview)
    return await propose_matches(c, mode, ask)


def select_ids(parts: list[IdRange], ctx: dict[int, object]) -> list[int]:
    """The context's messages an id list names: each single id (which must be one of
    them), and those whose ids fall in each range (a range must hold at least one).
    A range is never expanded: 1-1000000000 costs what the context holds."""
    missing = [str(p) for p in parts if p.single and p.lo not in ctx]
    keys = sorted(ctx) if len(parts) > len(missing) else []
    empty = [str(p) for p in parts
             if not p.single and bisect_left(keys, p.lo) == bisect_right(keys, p.hi)]
    if missing or empty:
        problems = []
        if missing:
            problems.append(f"not in this agent's context: {_listed(missing)}")
        if empty:
            problems.append(f"no message of this agent's context has an id in {_listed(empty)}")
        raise CommandError("; ".join(problems) + ". See `context` for the ids.")
    chosen: list[int] = []
    for p in parts:
        if p.single:
            chosen.append(p.lo)
        else:
            chosen.extend(keys[bisect_left(keys, p.lo):bisect_right(keys, p.hi)])
    return list(dict.fromkeys(chosen))


def _listed(parts: list[str]) -> str:
    return ", ".join(parts[:10]) + (" ..." if len(parts) > 10 else "")


async def forget(c: CommandContext) -> FilterProposal | CommandResult:
    return await _filter(c, "forget")


async def remember(c: CommandContext) -> FilterProposal | CommandResult:
    return await _filter(c, "remember")




PRUNED_TEXT_LINES = 12  # of the summary's text shown by /context (context --json: all)


async def pruned_lines(c: CommandContext, w) -> list[str]:
    """The pruned turns' summary: its tokens within the reserve, what it covers, its text."""
    compactor = c.services.compactor
    sent = None if compactor is None else await compactor.pruned.sent(
        c.agent, c.replayer, c.services.meter(c.agent), w.reserve)
    if sent is None:
        what = "none yet: made after a turn ends" if w.start_index else "nothing pruned"
        return [f"  pruned summary {0:>9,}  ({what}; reserve {w.reserve:,})"]
    covered = sent.summary.covered
    kind = ", extractive" if sent.summary.extractive else ""
    lines = [f"  pruned summary {sent.tokens:>9,}  ({covered:,} pruned message"
             f"{'s' if covered != 1 else ''} summarised{kind}; reserve {w.reserve:,})"]
    text = sent.text.splitlines()
    lines += [f"    | {line}" for line in text[:PRUNED_TEXT_LINES]]
    if len(text) > PRUNED_TEXT_LINES:
        lines.append(f"    | ... ({len(text) - PRUNED_TEXT_LINES:,} more lines; "
                     "`ikigai context --json` has them all)")
    return lines


async def context(c: CommandContext) -> CommandResult:
    c.args.done()
    r = c.replayer
    w = await c.services.measure(c.agent.id)
    kind = "exact" if w.exact else "estimated"
    inside = len(r.ctx) - len(r.summaries) - w.start_index
    budget = f"{w.budget:,} tokens" if w.budget else "off (sliding window disabled)"
    if r.budget_event is not None:
        budget += " (set with /budget)"
    start = f"message {w.start}" if w.start is not None else "empty"
    model = c.services.model_of(c.agent)
    limits = c.services.limits(model) if c.services.limits is not None else None
    said = limit_words(limits, model) if limits is not None else None
    lines = [
        f"{sent_line(w.tokens, w.limit, w.budget, w.exact)}, {w.state}; "
        f"counts {kind} for {model}",
        *([f"Input limit: {said}"] if said else []),
        f"  system prompt  {w.system:>9,}" + (f"  (of which {len(r.pins)} pins: {w.pins:,})"
                                                 if r.pins else ""),
        f"  tools          {w.tools:>9,}",
        # "(2 summaries)" names what the figure counts; none: no note (not "0  (0)")
        f"  summaries      {w.summaries:>9,}" + (f"  ({len(r.summaries):,} summar"
                                                 f"{'y' if len(r.summaries) == 1 else 'ies'})"
                                                 if r.summaries else ""),
        f"  window         {w.window:>9,}  ({inside:,} messages)",
        f"  outside window {w.outside:>9,}  ({w.start_index:,} messages, {w.pruned_turns:,} pruned "
        f"turn{'s' if w.pruned_turns != 1 else ''}; not sent)",
    ]
    if w.reserve:  # summarize_pruned: the summary of the pruned turns, within its reserve
        lines += await pruned_lines(c, w)
    lines += [history_line(w.tokens + w.outside), f"Window: {budget}; starts at {start}",
              workspace_line(c)]
    lines += history_lines(await context_history(r, c.agent.id, c.tree, c.services.page),
                           time.time())
    if c.services.usage is not None:  # tokens and cost of this agent's requests to date
        lines.append((await c.services.usage(c.agent.id)).line())
    lines += settings.pin_lines(c)
    return CommandResult(lines, data=w)
