"""/recall QUERY: search every message of this agent and its ancestors, those out of the
context included (forgotten, rewound, cleared, summarised, pruned by the window), and say
where each one stands (SPEC §8). Read-only: it writes nothing but its command record.
With --restore the hits out of the context come back (core/commands_restore.py); the
TUI's /recall opens a dialog to tick which.

The search is the log's full-text index (FTS5, every message ever written); the query's
words must all appear (any order, any case, accents ignored), best matches first.
"""

from __future__ import annotations

import re

from ikigai_tui.core.command_context import CommandContext
from ikigai_tui.core.commands import CommandError, CommandResult, UsageError
from ikigai_tui.core.commands_restore import OUT, RestoreProposal, first_line, propose, standings

LIMIT = 20  # hits listed
_WORD = re.compile(r"\w+", re.UNICODE)
FLAGS = ("--restore", "--dry-run")


def fts_query(text: str) -> str:
    """The query's words, each quoted (FTS5 operators and punctuation are plain text)."""
    words = _WORD.findall(text)
    if not words:
        raise UsageError("missing QUERY (words to search for)")
    return " ".join(f'"{w}"' for w in words)


def _read(c: CommandContext) -> tuple[str, set[str]]:
    """The query and the flags (--restore, --dry-run: anywhere among its words)."""
    raw = c.args.rest().strip()
    words = raw.split()
    flags = {w for w in words if w.startswith("--") and len(w) > 2}
    unknown = flags - set(FLAGS)
    if unknown:
        raise UsageError(f"unknown option '{sorted(unknown)[0]}'")
    if not flags:
        return raw, flags
    return " ".join(w for w in words if w not in flags), flags


async def recall(c: CommandContext) -> CommandResult | RestoreProposal:
    text, flags = _read(c)
    query = fts_query(text)
    search = c.services.search
    if search is None:
        raise CommandError("searching is not available here")
    lineage = c.tree.lineage(c.agent.id)
    hits = await search(query, [a.id for a in lineage], LIMIT)
    if not hits:
        return CommandResult([f'No message of this agent or its ancestors matches "{text}".'],
                             data=[])
    states = await standings(c, hits)
    if flags:
        order = sorted(range(len(hits)), key=lambda n: hits[n].id)
        outcome = await propose(c, [hits[n] for n in order], [states[n] for n in order],
                                dry_run="--dry-run" in flags, query=text)
        if isinstance(outcome, RestoreProposal):
            # Bringing the hits back changes the context: held for the turn's end, as /restore.
            c.spec = c.spec._replace(deferred=True)
        return outcome
    noun = "message matches" if len(hits) == 1 else "messages match"
    more = f" (the best {LIMIT})" if len(hits) == LIMIT else ""
    lines = [f'{len(hits)} {noun} "{text}"{more}:']
    data = []
    counter = c.services.meter(c.agent).counter
    for event, standing in zip(hits, states):
        first = first_line(event)
        lines.append(f"  #{event.id} {event.kind} · {standing.state} · {first}")
        data.append({"id": event.id, "agent": event.agent_id, "role": event.kind,
                     "state": standing.state, "text": first,
                     "restorable": standing.status == OUT,
                     "tokens": counter.scale(counter.message(event.kind, event.payload))})
    if any(d["restorable"] for d in data):
        lines.append("Bring them back with /restore IDS, or all with /recall QUERY --restore.")
    return CommandResult(lines, data=data)

