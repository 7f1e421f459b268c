"""An entry of the context named by its id, for /fork --at ID and /mark --at ID (the
cursor mode's "fork here" and "mark here")."""

from __future__ import annotations

from ikigai_tui.core.commands.context import CommandContext
from ikigai_tui.core.errors import CommandError, UsageError
from ikigai_tui.core.replay.queries import mark_seq


def context_entry(c: CommandContext, word: str) -> int:
    """The id `word` (`123` or `#123`) of an entry in this agent's context now."""
    text = word[1:] if word.startswith("#") else word
    if not text.isdigit():
        raise UsageError(f"'{word}' is not an entry id")
    key = int(text)
    if key not in c.replayer.ctx:
        raise CommandError(f"#{key} is not in this agent's context")
    return key


def mark_at(c: CommandContext) -> dict:
    """The payload part of /mark ... --at ID: the entry and the seq a rewind keeps up to
    (core/replay/queries.py mark_seq); empty without --at."""
    if c.args.peek_word() != "--at":
        return {}
    c.args.take()
    key = context_entry(c, c.args.require("ID after --at"))
    r = c.replayer
    return {"at": mark_seq(r.ctx, key, r.result_of), "entry": key}
