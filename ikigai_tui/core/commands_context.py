"""Context commands: /clear /mark /rewind /marks /forget /remember /undo /context."""

from __future__ import annotations

from ikigai_tui.core.command_context import Invocation
from ikigai_tui.core.commands import (
    CommandError, CommandResult, UsageError, check_mark_name, parse_id_list,
)


async def clear(c: Invocation) -> CommandResult:
    name = c.args.take()
    c.args.done()
    if name is None:
        c.add("clear", {})
        return CommandResult(["Context cleared."])
    return _rewind_to(c, name)


def _rewind_to(c: Invocation, name: str) -> CommandResult:
    mark = c.resolve_mark(name)
    c.add("rewind", {"mark": mark.name, "mark_event": mark.event_id})
    if mark.name is None:
        return CommandResult(["Rewound to last checkpoint."])
    return CommandResult([f"Rewound to '{mark.name}'."])


async def mark(c: Invocation) -> CommandResult:
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


async def rewind(c: Invocation) -> CommandResult:
    name = c.args.take()
    c.args.done()
    if name is not None:
        return _rewind_to(c, name)
    latest = c.replayer.latest_mark()
    if latest is None:
        raise CommandError("there is no valid mark to rewind to. Set one with /mark [NAME].")
    return _rewind_to(c, latest.label)


async def marks(c: Invocation) -> CommandResult:
    c.args.done()
    r = c.replayer
    valid = r.valid_marks()
    if not valid:
        return CommandResult(["No marks."])
    lines = [f"{m.label}  at position {r.mark_position(m)}  (event {m.event_id})" for m in valid]
    return CommandResult(lines, data=[(m.label, r.mark_position(m)) for m in valid])


def _read_ids(c: Invocation, verb: str) -> list[int]:
    first = c.args.take()
    if first is None:
        raise UsageError("missing --ids LIST")
    if first.startswith("--ids="):
        listed = first[len("--ids="):]
    elif first == "--ids":
        listed = c.args.require("id list after --ids")
    else:
        raise CommandError(
            f"/{verb} by criteria needs the matcher, which is not built yet; "
            f"use /{verb} --ids LIST (ids from the context, e.g. 3,5-9)"
        )
    c.args.done()
    ids = parse_id_list(listed)
    missing = [i for i in ids if i not in c.replayer.ctx]
    if missing:
        shown = ", ".join(str(i) for i in missing[:10]) + (" ..." if len(missing) > 10 else "")
        raise CommandError(f"not in this agent's context: {shown}. See `context` for the ids.")
    return ids


async def forget(c: Invocation) -> CommandResult:
    ids = _read_ids(c, "forget")
    removed = c.replayer.with_partners(set(ids))
    c.add("filter", {"mode": "forget", "ids": ids})
    extra = len(removed) - len(ids)
    note = f" (with {extra} tool-call partner{'s' if extra != 1 else ''})" if extra else ""
    return CommandResult([f"Forgot {len(removed)} message{'s' if len(removed) != 1 else ''}{note}."])


async def remember(c: Invocation) -> CommandResult:
    ids = _read_ids(c, "remember")
    r = c.replayer
    keep = set(ids)
    removed = r.with_partners({i for i in r.ctx if i not in keep})
    c.add("filter", {"mode": "remember", "ids": ids})
    kept = len(r.ctx) - len(removed)
    return CommandResult([f"Kept {kept} message{'s' if kept != 1 else ''}; forgot {len(removed)}."])


_OP_NAMES = {"clear": "/clear", "rewind": "/rewind", "filter": "filter", "compact": "/compact"}


async def undo(c: Invocation) -> CommandResult:
    c.args.done()
    r = c.replayer
    target = r.undo_target()
    if target is None:
        raise CommandError("nothing to undo: no clear, rewind, filter or compact left to reverse")
    kind, payload = next((k, p) for i, k, p in reversed(r.history) if i == target)
    what = _OP_NAMES[kind]
    if kind == "filter":
        what = f"/{payload['mode']}"
    c.add("undo", {"target": target})
    return CommandResult([f"Undid {what} (event {target})."])


def _k(tokens: int) -> str:
    return f"{tokens / 1000:.1f}K" if tokens >= 10_000 else f"{tokens:,}"


async def context(c: Invocation) -> CommandResult:
    c.args.done()
    r = c.replayer
    w = await c.session.measure(c.agent.id)
    kind = "exact" if w.exact else "estimated"
    inside = len(r.ctx) - len(r.summaries) - w.start_index
    budget = f"{w.budget:,}" if w.budget else "off (sliding window disabled)"
    start = f"message {w.start}" if w.start is not None else "empty"
    lines = [
        f"Context: {_k(w.tokens)}/{_k(w.limit)} tokens ({w.percent:.0f}%), {w.state}; "
        f"counts {kind} for {c.session.model_of(c.agent)}",
        f"  system prompt  {w.system:>9,}" + (f"  (of which {len(r.pins)} pins: {w.pins:,})"
                                                 if r.pins else ""),
        f"  tools          {w.tools:>9,}",
        f"  summaries      {w.summaries:>9,}  ({len(r.summaries)})",
        f"  window         {w.window:>9,}  ({inside:,} messages)",
        f"  outside window {w.outside:>9,}  ({w.start_index:,} messages, {w.pruned_turns:,} pruned "
        f"turn{'s' if w.pruned_turns != 1 else ''}; not sent)",
        f"Budget: {budget}; window starts at {start}",
    ]
    return CommandResult(lines, data=w)
