"""Context commands: /clear /mark /rewind /marks /forget /remember /undo /context."""

from __future__ import annotations

from ikigai_tui.core.command_context import CommandContext
from ikigai_tui.core.commands import (
    CommandError, CommandResult, UsageError, check_mark_name,
)
from ikigai_tui.core.matching.command import propose_matches, read_filter_args
from ikigai_tui.core.proposals import FilterProposal


async def clear(c: CommandContext) -> CommandResult:
    name = c.args.take()
    c.args.done()
    if name is None:
        c.add("clear", {})
        return CommandResult(["Context cleared."])
    return _rewind_to(c, name)


def _rewind_to(c: CommandContext, name: str) -> CommandResult:
    mark = c.resolve_mark(name)
    c.add("rewind", {"mark": mark.name, "mark_event": mark.event_id})
    if mark.name is None:
        return CommandResult(["Rewound to last checkpoint."])
    return CommandResult([f"Rewound to '{mark.name}'."])


async def mark(c: CommandContext) -> CommandResult:
    name = c.args.take()
    c.args.done()
    if name is None:
        c.add("mark", {"name": None})
        return CommandResult(["Checkpoint created."])
    check_mark_name(name)
    if name.startswith("#"):
        raise UsageError("mark names cannot start with '#'")
    old = c.replayer.find_mark(name)
    c.add("mark", {"name": name})
    if old is not None:
        moved = c.replayer.mark_position(old)
        return CommandResult([f"Checkpoint '{name}' created (moved from position {moved})."])
    return CommandResult([f"Checkpoint '{name}' created."])


async def rewind(c: CommandContext) -> CommandResult:
    name = c.args.take()
    c.args.done()
    if name is not None:
        return _rewind_to(c, name)
    latest = c.replayer.latest_mark()
    if latest is None:
        raise CommandError("there is no valid mark to rewind to. Set one with /mark [NAME].")
    return _rewind_to(c, latest.label)


async def marks(c: CommandContext) -> CommandResult:
    c.args.done()
    r = c.replayer
    valid = r.valid_marks()
    if not valid:
        return CommandResult(["No marks."])
    lines = [f"{m.label}  at position {r.mark_position(m)}  (event {m.event_id})" for m in valid]
    return CommandResult(lines, data=[(m.label, r.mark_position(m)) for m in valid])


async def _filter(c: CommandContext, mode: str) -> FilterProposal | CommandResult:
    """A proposal to forget (or keep only) messages, by ids or by criteria through a
    matcher: nothing written until a reviewer accepts it (see core/proposals.py)."""
    ask = read_filter_args(c.args, mode)
    if ask.ids is not None:
        missing = [i for i in ask.ids if i not in c.replayer.ctx]
        if missing:
            shown = ", ".join(str(i) for i in missing[:10]) + (" ..." if len(missing) > 10 else "")
            raise CommandError(f"not in this agent's context: {shown}. See `context` for the ids.")
        tokens = (await c.services.measure(c.agent.id)).tokens
        return FilterProposal.build(mode, ask.ids, c.replayer, c.services.meter(c.agent), tokens,
                                    dry_run=ask.dry_run)
    return await propose_matches(c, mode, ask)


async def forget(c: CommandContext) -> FilterProposal | CommandResult:
    return await _filter(c, "forget")


async def remember(c: CommandContext) -> FilterProposal | CommandResult:
    return await _filter(c, "remember")


_OP_NAMES = {"clear": "/clear", "rewind": "/rewind", "filter": "filter", "compact": "/compact"}


async def undo(c: CommandContext) -> CommandResult:
    c.args.done()
    r = c.replayer
    claimed = c.pending_undos  # targets of undos waiting for this turn's end
    # The latest change not yet undone: one waiting for this turn's end first.
    pending = next((op for op in reversed(c.pending_ops) if op.ref not in claimed), None)
    if pending is not None:
        c.add("undo", {"target": pending.ref})
        return CommandResult([f"Undid {_op_name(pending.kind, pending.payload)} (not applied yet)."])
    target = next((op for op in reversed(r.ops) if op not in r.undone and op not in claimed), None)
    if target is None:
        raise CommandError("nothing to undo: no clear, rewind, filter or compact left to reverse")
    kind, payload = next((k, p) for i, k, p in reversed(r.history) if i == target)
    c.add("undo", {"target": target})
    return CommandResult([f"Undid {_op_name(kind, payload)} (event {target})."])


def _op_name(kind: str, payload: dict) -> str:
    return f"/{payload['mode']}" if kind == "filter" else _OP_NAMES[kind]


def _k(tokens: int) -> str:
    return f"{tokens / 1000:.1f}K" if tokens >= 10_000 else f"{tokens:,}"


async def context(c: CommandContext) -> CommandResult:
    c.args.done()
    r = c.replayer
    w = await c.services.measure(c.agent.id)
    kind = "exact" if w.exact else "estimated"
    inside = len(r.ctx) - len(r.summaries) - w.start_index
    budget = f"{w.budget:,}" if w.budget else "off (sliding window disabled)"
    start = f"message {w.start}" if w.start is not None else "empty"
    lines = [
        f"Context: {_k(w.tokens)}/{_k(w.limit)} tokens ({w.percent:.0f}%), {w.state}; "
        f"counts {kind} for {c.services.model_of(c.agent)}",
        f"  system prompt  {w.system:>9,}" + (f"  (of which {len(r.pins)} pins: {w.pins:,})"
                                                 if r.pins else ""),
        f"  tools          {w.tools:>9,}",
        f"  summaries      {w.summaries:>9,}  ({len(r.summaries)})",
        f"  window         {w.window:>9,}  ({inside:,} messages)",
        f"  outside window {w.outside:>9,}  ({w.start_index:,} messages, {w.pruned_turns:,} pruned "
        f"turn{'s' if w.pruned_turns != 1 else ''}; not sent)",
        f"Budget: {budget}; window starts at {start}",
    ]
    if c.services.usage is not None:  # tokens and cost of this agent's requests to date
        lines.append((await c.services.usage(c.agent.id)).line())
    return CommandResult(lines, data=w)
