"""/recall QUERY: search every message of this agent and its ancestors, those out of the
context included (forgotten, rewound, cleared, summarised, pruned by the window), and say
where each one stands (SPEC §8). Read-only: it writes nothing but its command record.
With --restore the hits out of the context come back (core/handlers/restore.py); the
TUI's /recall opens a dialog to tick which.

The search is the log's full-text index (FTS5, every message ever written); the query's
words must all appear (any order, any case, accents ignored), best matches first.

A hit that is part of a reply (an assistant message, a tool call or result) is listed
with its exchange's question, the user message that opened it, when that is not a hit
itself: bringing a reply back without its question would leave two user messages in a
row in the context, or an answer to nothing. Each entry of the data names its exchange
(the question's id), so the TUI's dialog groups them.
"""

from __future__ import annotations

import re

from ikigai_tui.core.commands.context import CommandContext
from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.errors import UsageError
from ikigai_tui.core.commands.parse import CommandResult
from ikigai_tui.core.handlers.restore import (
    OUT, RestoreProposal, Standing, first_line, propose, standings,
)
from ikigai_tui.core.events import Event

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
    found = len(hits)
    exchange, questions = await _exchanges(c, hits)
    hits = _with_questions(hits, questions)
    question_of = {q.id: hit for hit, q in questions.items()}
    states = [s if e.id not in question_of else
              Standing(f"{s.state} · question of #{question_of[e.id]}", s.status)
              for e, s in zip(hits, await standings(c, hits))]
    if flags:
        # A question comes back with its reply; one already in the context is no news.
        order = sorted((n for n in range(len(hits))
                        if hits[n].id not in question_of or states[n].status == OUT),
                       key=lambda n: hits[n].id)
        outcome = await propose(c, [hits[n] for n in order], [states[n] for n in order],
                                dry_run="--dry-run" in flags, query=text, exchanges=exchange)
        if isinstance(outcome, RestoreProposal):
            # Bringing the hits back changes the context: held for the turn's end, as /restore.
            c.spec = c.spec._replace(deferred=True)
        return outcome
    noun = "message matches" if found == 1 else "messages match"
    more = f" (the best {LIMIT})" if found == LIMIT else ""
    lines = [f'{found} {noun} "{text}"{more}:']
    data = []
    counter = c.services.meter(c.agent).counter
    for event, standing in zip(hits, states):
        first = first_line(event)
        raw = counter.message(event.kind, event.payload)
        lines.append(f"  #{event.id} {event.kind} · {standing.state} · {first}")
        data.append({"id": event.id, "agent": event.agent_id, "role": event.kind,
                     "state": standing.state, "text": first,
                     "restorable": standing.status == OUT, "exchange": exchange.get(event.id),
                     "tokens": counter.scale(raw), "raw_tokens": raw})
    if any(d["restorable"] for d in data):
        lines.append("Bring them back with /restore IDS, or all with /recall QUERY --restore.")
    return CommandResult(lines, data=data)


async def _exchanges(c: CommandContext, hits: list[Event]) -> tuple[dict[int, int], dict[int, Event]]:
    """Each hit's exchange (the id of the user message that opened it; a user hit opens
    its own), and the questions to list that are not hits: the id of the first hit of
    each such exchange -> its question. The questions are read from the log."""
    page = c.services.page
    exchange: dict[int, int] = {}
    questions: dict[int, Event] = {}
    ids = {hit.id for hit in hits}
    listed: set[int] = set()
    for hit in hits:
        if hit.kind == "user":
            exchange[hit.id] = hit.id
            continue
        if page is None:
            continue
        before = await page(hit.agent_id, ["user"], before=hit.id, limit=1)
        if not before:
            continue
        question = before[0]
        exchange[hit.id] = exchange[question.id] = question.id
        if question.id not in ids and question.id not in listed:
            listed.add(question.id)
            questions[hit.id] = question
    return exchange, questions


def _with_questions(hits: list[Event], questions: dict[int, Event]) -> list[Event]:
    """The hits, each listed question just before the first hit of its exchange."""
    out: list[Event] = []
    for hit in hits:
        if hit.id in questions:
            out.append(questions[hit.id])
        out.append(hit)
    return out
