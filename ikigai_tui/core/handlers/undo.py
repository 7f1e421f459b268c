"""/undo: reverse the latest context change not yet undone, and say in plain words what
it reverses (the command that made it, when) and what comes back.

Context changes are /clear, /rewind, /forget, /remember, compactions, /pin, /unpin and
/budget; a change to the memories folder (the LLM's memory tool) and a permission the
user granted "always for this agent" (core/tools/permissions.py) are undone the same way. /system and /model are not undone (set them again instead): an /undo that
reaches past one of them says so, since what is sent then differs from before the change
it reverses.
"""

from __future__ import annotations

import asyncio
import time
from bisect import bisect_left
from operator import itemgetter

from ikigai_tui.core.commands.context import CommandContext
from ikigai_tui.core.errors import CommandError, UsageError
from ikigai_tui.core.commands.parse import CommandResult
from ikigai_tui.core.events import (
    CONTEXT_MESSAGE_KINDS, NOT_UNDOABLE_CHANGES, UNDOABLE_KINDS, EventRow,
)
from ikigai_tui.core.replay.replayer import Replayer
from ikigai_tui.core.times import STAMP

THREAD_ROWS = 20_000  # a longer log is replayed off the event loop
TEXT_CHARS = 80  # of a command's text quoted in a line


async def undo(c: CommandContext) -> CommandResult:
    to = _to_option(c)
    c.args.done()
    if to is not None:
        return await _undo_to(c, to)
    r = c.replayer
    claimed = c.pending_undos  # targets of undos waiting for this turn's end
    # The latest change not yet undone: one waiting for this turn's end first.
    pending = next((op for op in reversed(c.pending_ops) if op.ref not in claimed), None)
    if pending is not None:
        c.add("undo", {"target": pending.ref})
        text = quote(pending.text or _fallback_text(pending.kind, pending.payload))
        return CommandResult([f"Undid {text} (not applied yet)."])
    target = next((op for op in reversed(r.ops) if op not in r.undone and op not in claimed), None)
    if target is None:
        before_fork = (" Changes made before this agent was forked belong to its parent."
                       if c.agent.parent_id is not None else "")
        raise CommandError("nothing to undo: this agent has no context change left to reverse "
                           "(/clear, /rewind, /forget, /remember, /restore, /compact, /pin, "
                           f"/unpin, /budget, a memory change, a permission granted)."
                           f"{before_fork}")
    history = r.history
    index = bisect_left(history, target, key=itemgetter(0))
    _id, kind, payload = history[index]
    if kind == "memory":
        return await _undo_memory(c, target, history, index)
    undone = set(r.undone) | {t for t in claimed if isinstance(t, int)} | {target}
    after = await _replay_undoing(r, undone)
    text = quote(command_text(history, index))
    lines = [f"Undid {text} ({await _when(c, target, kind)}): {_what_changes(r, after, kind, payload)}."]
    later = [row for row in history[index + 1:] if row[1] in NOT_UNDOABLE_CHANGES]
    if later:
        shown = ", ".join([quote(command_text(history, bisect_left(history, row[0], key=itemgetter(0))))
                           for row in later[-3:]])
        lines.append(f"It reaches past {_plural(len(later), 'later change')} that /undo does not "
                     f"reverse, still in effect: {shown}.")
    c.add("undo", {"target": target})
    return CommandResult(lines)


def _to_option(c: CommandContext) -> int | None:
    """`--to ID` (or `--to #ID`): the change to take the context back to just before."""
    word = c.args.take()
    if word is None:
        return None
    if word.startswith("--to="):
        value: str | None = word[5:]
    elif word == "--to":
        value = c.args.take()
    else:
        raise UsageError(f"unexpected argument '{word}' (/undo, or /undo --to ID as /history "
                         "lists them)")
    value = (value or "").removeprefix("#")
    if not value.isdigit():
        raise UsageError("--to takes the id of a change, as /history lists them (#123)")
    return int(value)


async def _undo_to(c: CommandContext, to: int) -> CommandResult:
    """Undo every change not yet undone from the latest back to `to`, in one write: the
    context as it was just before `to` (later messages stay)."""
    r = c.replayer
    if c.pending_ops or c.pending_undos:
        raise CommandError("changes wait for this turn's end: /undo --to works once it ends")
    if to not in r.ops:
        raise CommandError(f"#{to} is not a context change of this agent (/history lists them)")
    if to in r.undone:
        raise CommandError(f"#{to} is already undone (/history says by what)")
    targets = [op for op in r.ops if op >= to and op not in r.undone]
    history = r.history
    kinds = {op: history[bisect_left(history, op, key=itemgetter(0))][1] for op in targets}
    memory = [op for op in targets if kinds[op] == "memory"]
    if memory:
        raise CommandError(f"a memory change (#{memory[-1]}) lies in between: its file goes "
                           "back only by a plain /undo; undo it first, or choose a later change")
    after = await _replay_undoing(r, set(r.undone) | set(targets))
    index = bisect_left(history, to, key=itemgetter(0))
    text = quote(command_text(history, index))
    lines = [f"Undid {_plural(len(targets), 'change')} back to {text} "
             f"({await _when(c, to, kinds[to])}): {_what_changes(r, after, kinds[to], {})}."]
    for op in reversed(targets):  # newest first, as one /undo after another would
        c.add("undo", {"target": op})
    return CommandResult(lines)


async def _undo_memory(c: CommandContext, target: int, history: list[EventRow],
                       index: int) -> CommandResult:
    """A memory change: the folder goes back as it was before it, at once (the files are
    outside the context; mid-turn only the undo's record waits for the turn's end), or
    nothing is written when the file changed since."""
    from ikigai_tui.core.handlers.memory import memory_service
    from ikigai_tui.core.memory.change import reverse
    from ikigai_tui.core.memory.sandbox import MemoryRefused

    service = memory_service(c)
    try:
        done = reverse(service.box, history[index][2])
    except MemoryRefused as exc:
        raise CommandError(f"cannot undo {quote(command_text(history, index))}: {exc}") from None
    c.add("undo", {"target": target})
    made = await _when(c, target, "memory")
    return CommandResult([f"Undid {quote(command_text(history, index))} ({made}): {done}."])


async def _replay_undoing(r: Replayer, undone: set[int]) -> Replayer:
    rows = r.history.copy()  # a copy: the live history may grow meanwhile
    if len(rows) < THREAD_ROWS:
        return Replayer.undoing(rows, r.base, undone)
    return await asyncio.to_thread(Replayer.undoing, rows, r.base, undone)


# -- what it was ------------------------------------------------------------------------------


def command_text(history: list[EventRow], index: int) -> str:
    """The command that wrote history[index]: the command record of the same write, which
    comes just before it; else a description from the event itself."""
    _id, kind, payload = history[index]
    if kind in ("filter", "tool_output") and payload.get("command"):
        return payload["command"]
    for j in range(index - 1, max(-1, index - 4), -1):
        other = history[j][1]
        if other == "command":
            return history[j][2].get("text") or _fallback_text(kind, payload)
        if other in UNDOABLE_KINDS or other in CONTEXT_MESSAGE_KINDS or other == "undo":
            break
    return _fallback_text(kind, payload)


def _fallback_text(kind: str, payload: dict) -> str:
    if kind == "filter":
        return f"/{payload.get('mode', 'forget')}"
    if kind == "tool_output":
        return "/forget --tool-results" if payload.get("action") == "clear" else "/restore"
    if kind == "rewind":
        return f"/rewind {payload['mark']}" if payload.get("mark") else "/rewind"
    if kind == "compact":
        return "a compaction"
    if kind == "pin":
        return f"/pin {payload.get('text', '')}"
    if kind == "unpin":
        return f"/unpin {payload.get('index', '')}"
    if kind == "budget":
        return f"/budget {payload.get('budget') or 'off'}"
    if kind == "memory":
        from ikigai_tui.core.memory.change import words

        return words(payload)
    if kind == "permission":
        from ikigai_tui.core.tools.permissions import grant_words

        return grant_words(payload)
    return f"/{kind}"


def quote(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= TEXT_CHARS else text[: TEXT_CHARS - 1] + "…"


async def _when(c: CommandContext, event_id: int, kind: str) -> str:
    page = c.services.page
    found = await page(c.agent.id, [kind], after=event_id - 1, limit=1) if page else []
    if not found or found[0].id != event_id:
        return "made earlier"
    return "made " + time.strftime(STAMP, time.localtime(found[0].created_at))


# -- what comes back --------------------------------------------------------------------------


def _what_changes(before: Replayer, after: Replayer, kind: str, payload: dict) -> str:
    parts: list[str] = []
    back = [k for k in after.ctx if k not in before.ctx]
    gone = [k for k in before.ctx if k not in after.ctx]
    back_messages = [k for k in back if k not in after.summaries]
    gone_summaries = [k for k in gone if k in before.summaries]
    gone_messages = [k for k in gone if k not in before.summaries]
    if back_messages:
        verb = "is" if len(back_messages) == 1 else "are"
        parts.append(f"{_plural(len(back_messages), 'message')} {verb} back in the context")
    if gone_summaries:
        parts.append("the summary that replaced them leaves" if len(gone_summaries) == 1
                     else f"{len(gone_summaries)} summaries leave")
    if gone_messages:
        parts.append(f"{_plural(len(gone_messages), 'message')} leave{'s' if len(gone_messages) == 1 else ''} it")
    back_output = [k for k in before.cleared if k not in after.cleared and k in after.ctx]
    gone_output = [k for k in after.cleared if k not in before.cleared and k in after.ctx]
    if back_output:
        parts.append(f"the output of {_plural(len(back_output), 'tool result')} is sent whole again")
    if gone_output:
        parts.append(f"the output of {_plural(len(gone_output), 'tool result')} is cleared again")
    marks = [m for key, m in after.marks.items() if key not in before.marks]
    if marks:
        parts.append(_marks_back(marks))
    parts += _pin_changes(before.pins, after.pins)
    parts += [f"{tool} is no longer {'always allowed' if rule == 'allow' else 'denied'} for this agent"
              for tool, rule in before.granted if (tool, rule) not in after.granted]
    if before.budget != after.budget:
        budget = ("the configured default" if after.budget is None else
                  "off" if after.budget <= 0 else f"{after.budget:,} tokens")
        parts.append(f"the window budget is back to {budget}")
    if not parts:
        parts.append("the context does not change (later changes cover the same messages)")
    text = "; ".join(parts)
    if back or gone:
        text += f" ({len(before.ctx):,} -> {len(after.ctx):,} messages)"
    if kind == "tool_output" and "before" in payload and "after" in payload:
        text += (f". It had taken the context from ~{payload['before']['tokens']:,} tokens "
                 f"to ~{payload['after']['tokens']:,}")
    elif kind == "filter" and "before" in payload and "after" in payload:
        b, a = payload["before"], payload["after"]
        text += (f". It had taken the context from {_plural(b['messages'], 'message')} "
                 f"(~{b['tokens']:,} tokens) to {a['messages']:,} (~{a['tokens']:,})")
    return text


def _marks_back(marks: list) -> str:
    named = [m.name for m in marks if m.name is not None]
    unnamed = len(marks) - len(named)
    words = [f"mark{'s' if len(named) > 1 else ''} {', '.join(named)}"] if named else []
    if unnamed:
        words.append("an unnamed mark" if unnamed == 1 else f"{unnamed} unnamed marks")
    return f"{' and '.join(words)} {'is' if len(marks) == 1 else 'are'} valid again"


def _pin_changes(before: list[str], after: list[str]) -> list[str]:
    if len(after) > len(before):
        extra = [p for p in after if p not in before] or after[len(before):]
        return [f"pin '{quote(p)}' is back" for p in extra[:3]]
    if len(after) < len(before):
        extra = [p for p in before if p not in after] or before[len(after):]
        return [f"pin '{quote(p)}' is removed" for p in extra[:3]]
    return []


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"
