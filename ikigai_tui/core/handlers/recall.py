"""/recall QUERY: search every message of this agent and its ancestors, those out of the
context included (forgotten, rewound, cleared, summarised, pruned by the window), and say
where each one stands (SPEC §8). Read-only: it writes nothing but its command record (and
the usage of the side requests it made). With --restore the hits out of the context come
back (core/handlers/restore.py); the TUI's /recall opens a dialog to tick which.

Two searches, merged: words and meaning.
- Words: the log's full-text index (every message ever written) with the query's topic
  words (common and framing words dropped: "what did we discuss about database schema?"
  looks for database and schema), each in any of its inflections (cats: cat; schemas:
  schema), all of them required.
- Meaning: the same matcher as /forget's (core/matching: the LLM matcher with a provider
  model, the local one with the offline model or --local) over every message the agent
  holds, in the context or not.
Hits found by both come first, then those by words (best first), then by meaning (most
similar first); each says why. `/recall QUESTION?` (ending in a question mark) with a
provider model also answers the question from the hits in one side request that cites
them by id; the answer is output, never a message of the context.

A hit that is part of a reply (an assistant message, a tool call or result) is listed
with its exchange's question, the user message that opened it, when that is not a hit
itself: bringing a reply back without its question would leave two user messages in a
row in the context, or an answer to nothing. Each entry of the data names its exchange
(the question's id), so the TUI's dialog groups them.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from ikigai_tui.core.commands.context import CommandContext
from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.errors import UsageError
from ikigai_tui.core.commands.parse import CommandResult
from ikigai_tui.core.handlers.restore import (
    OUT, RestoreProposal, Standing, first_line, propose, standings,
)
from ikigai_tui.core.events import Event
from ikigai_tui.core.handlers.recall_meaning import answer_from, by_meaning, merged
from ikigai_tui.core.matching.local_words import Terms

LIMIT = 20  # hits listed
_WORD = re.compile(r"\w+", re.UNICODE)
FLAGS = ("--restore", "--dry-run", "--local")


class RecallArgs(NamedTuple):
    text: str  # the query as typed, without the options
    flags: set[str]
    model: str | None  # --matcher-model


def fts_query(text: str) -> str:
    """The query's topic words (core/matching/local_words.Terms: common and framing words
    dropped), each as any of its inflections, all required; the words as typed when all
    are common words. Each term is quoted (FTS5 operators and punctuation are plain text)."""
    terms = Terms(text)
    if terms:
        return " AND ".join("(" + " OR ".join(f'"{form}"' for form in forms) + ")"
                            for forms in terms.forms.values())
    words = _WORD.findall(text)
    if not words:
        raise UsageError("missing QUERY (words to search for)")
    return " ".join(f'"{w}"' for w in words)


def _read(c: CommandContext) -> RecallArgs:
    """The query and the options (anywhere among its words): --restore, --dry-run,
    --local, --matcher-model M (or =M)."""
    words = c.args.rest().strip().split()
    flags: set[str] = set()
    model: str | None = None
    kept: list[str] = []
    items = iter(words)
    for word in items:
        if not word.startswith("--") or len(word) <= 2:
            kept.append(word)
        elif word.startswith("--matcher-model"):
            _name, eq, value = word.partition("=")
            model = value if eq else next(items, "")
            if _name != "--matcher-model" or not model.strip():
                raise UsageError("--matcher-model needs a model")
        elif word in FLAGS:
            flags.add(word)
        else:
            raise UsageError(f"unknown option '{word}'")
    if "--local" in flags and model is not None:
        raise UsageError("--local and --matcher-model each choose a matcher: give one")
    return RecallArgs(" ".join(kept), flags, model)


async def recall(c: CommandContext) -> CommandResult | RestoreProposal:
    ask = _read(c)
    text, flags = ask.text, ask.flags
    query = fts_query(text)
    search = c.services.search
    if search is None:
        raise CommandError("searching is not available here")
    lineage = c.tree.lineage(c.agent.id)
    by_words = await search(query, [a.id for a in lineage], LIMIT)
    meant, matcher, unmeant = await by_meaning(c, text, [a.id for a in lineage], ask.model,
                                               "--local" in flags)
    hits, reasons = merged(by_words, meant, LIMIT)
    if not hits:
        return CommandResult([f'No message of this agent or its ancestors matches "{text}" '
                              "(by its words or its meaning)."] + ([unmeant] if unmeant else []),
                             data=[])
    found = len(hits)
    exchange, questions = await _exchanges(c, hits)
    hits = _with_questions(hits, questions)
    question_of = {q.id: hit for hit, q in questions.items()}
    states = [s if e.id not in question_of else
              Standing(f"{s.state} · question of #{question_of[e.id]}", s.status)
              for e, s in zip(hits, await standings(c, hits))]
    if flags & {"--restore", "--dry-run"}:
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
    answer = await answer_from(c, matcher, text, hits) if text.rstrip().endswith("?") else None
    data = []
    counter = c.services.meter(c.agent).counter
    for event, standing in zip(hits, states):
        first = first_line(event)
        raw = counter.message(event.kind, event.payload)
        why = reasons.get(event.id)
        lines.append(f"  #{event.id} {event.kind} · {standing.state}"
                     + (f" · {why}" if why else "") + f" · {first}")
        data.append({"id": event.id, "agent": event.agent_id, "role": event.kind,
                     "state": standing.state, "text": first, "reason": why,
                     "restorable": standing.status == OUT, "exchange": exchange.get(event.id),
                     "tokens": counter.scale(raw), "raw_tokens": raw})
    if any(d["restorable"] for d in data):
        lines.append("Bring them back with /restore IDS, or all with /recall QUERY --restore.")
    if unmeant:
        lines.append(unmeant)
    if answer is not None:
        lines += ["Answer (from the hits; not added to the context):",
                  *(f"  {line}" for line in answer.splitlines() if line.strip())]
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
