"""/recall QUERY: search every message of this agent and its ancestors, those out of the
context included (forgotten, rewound, cleared, summarised, pruned by the window), and say
where each one stands (SPEC §8). Read-only: it writes nothing but its command record.

The search is the log's full-text index (FTS5, every message ever written); the query's
words must all appear (any order, any case, accents ignored), best matches first.
"""

from __future__ import annotations

import re

from ikigai_tui.core.command_context import CommandContext
from ikigai_tui.core.commands import CommandError, CommandResult, UsageError
from ikigai_tui.core.events import Event, message_text
from ikigai_tui.core.replay_queries import removal_label

LIMIT = 20  # hits listed
_WORD = re.compile(r"\w+", re.UNICODE)


def fts_query(text: str) -> str:
    """The query's words, each quoted (FTS5 operators and punctuation are plain text)."""
    words = _WORD.findall(text)
    if not words:
        raise UsageError("missing QUERY (words to search for)")
    return " ".join(f'"{w}"' for w in words)


async def recall(c: CommandContext) -> CommandResult:
    text = c.args.rest().strip()
    query = fts_query(text)
    search = c.services.search
    if search is None:
        raise CommandError("searching is not available here")
    lineage = c.tree.lineage(c.agent.id)
    hits = await search(query, [a.id for a in lineage], LIMIT)
    if not hits:
        return CommandResult([f'No message of this agent or its ancestors matches "{text}".'],
                             data=[])
    states = await _states(c, hits)
    noun = "message matches" if len(hits) == 1 else "messages match"
    more = f" (the best {LIMIT})" if len(hits) == LIMIT else ""
    lines = [f'{len(hits)} {noun} "{text}"{more}:']
    data = []
    for event, state in zip(hits, states):
        first = _first_line(event)
        lines.append(f"  #{event.id} {event.kind} · {state} · {first}")
        data.append({"id": event.id, "agent": event.agent_id, "role": event.kind,
                     "state": state, "text": first})
    return CommandResult(lines, data=data)


async def _states(c: CommandContext, hits: list[Event]) -> list[str]:
    r = c.replayer
    window = await c.services.measure(c.agent.id)
    messages = [k for k in r.ctx if k not in r.summaries]
    pruned = set(messages[:window.start_index])
    summarised = set(messages[:window.pruned_covered])  # by the pruned turns' summary sent
    labels = {a.id: c.tree.label(a.id) for a in c.tree.lineage(c.agent.id)}
    states = []
    for event in hits:
        key = event.id
        if key in r.ctx:
            states.append("pruned by the window (summarised, not sent verbatim)" if key in summarised
                          else "pruned by the window (not sent)" if key in pruned
                          else "in the context")
            continue
        removal = r.removal(key)
        if removal is not None:
            states.append(removal_label(removal[1], removal[2]))
        elif event.agent_id != c.agent.id:
            states.append(f"not inherited (in {labels.get(event.agent_id, event.agent_id)})")
        else:
            states.append("not in the context")
    return states


def _first_line(event: Event, most: int = 80) -> str:
    text = " ".join(message_text(event.kind, event.payload).split())
    return text if len(text) <= most else text[: most - 1] + "…"
