"""/recall by meaning (core/handlers/recall.py uses it): the same matcher as /forget's over
every message the agent holds, in the context or not (its own and its ancestors'); the
merge of those hits with the full-text ones; and, for `/recall QUESTION?` with a provider
model, the answer from the hits: one side request that cites them by id and never enters
the context (its usage is recorded, as a matcher's is)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ikigai_tui.core.commands.context import CommandContext
from ikigai_tui.core.events import CONTEXT_MESSAGE_KINDS, Event, message_text
from ikigai_tui.core.matching import RECALL, Candidate, Matcher, MatchProgress
from ikigai_tui.core.gateway import RequestCancelled
from ikigai_tui.core.notices import MatchingNotice
from ikigai_tui.core.provider import ProviderError

ALL = 1 << 40  # a page limit no log reaches: every message
# A hit found by meaning alone, scored below this share of the best score, is left out:
# the local matcher's neighbours of a match in a short chat are rarely what was meant.
RELATIVE = 0.5
ANSWER_TOKENS = 1_024  # room for the answer
ANSWER_CHARS = 2_000  # of each hit shown to the model that answers
ANSWER_SYSTEM = (
    "You answer the user's question about their earlier conversation from the messages "
    "below only, each labelled [#ID ROLE]. Cite the messages you use by their id, like "
    "[#12]. If they do not answer it, say so in one sentence. Be brief.")

Meant = tuple[Event, str | None, float | None]  # a hit, the matcher's reason, its score


async def _held(c: CommandContext, agent_ids: Sequence[str]) -> list[Event]:
    """Every message of the agents (root first), in log order."""
    page = c.services.page
    if page is None:
        return []
    kinds = sorted(CONTEXT_MESSAGE_KINDS)
    return [event for agent_id in agent_ids
            for event in await page(agent_id, kinds, after=0, limit=ALL)]


async def by_meaning(c: CommandContext, text: str, agent_ids: Sequence[str], model: str | None,
                     local: bool) -> tuple[list[Meant], Matcher, str | None]:
    """The messages the matcher finds for `text` (whole exchanges for the local one), and
    a line saying why none were looked for by meaning when the matcher failed."""
    matcher = c.services.matcher(c.agent, local, model)
    events = await _held(c, agent_ids)
    if not events:
        return [], matcher, None
    candidates = [Candidate(e.id, e.kind, message_text(e.kind, e.payload)) for e in events]
    agent_id = c.agent.id

    def progress(step: MatchProgress) -> None:
        c.services.notify(MatchingNotice(agent_id, step.done, step.total, matcher.name, text))

    try:
        report = await matcher.match(text, RECALL, candidates, progress=progress)
    except RequestCancelled:
        raise
    except ProviderError as exc:  # the words' hits still stand; said in the output
        return [], matcher, f"Not searched by meaning ({exc}): the hits are by words only."
    _record_usage(c, getattr(matcher, "model", report.matcher), "match", report.usage)
    by_id = {e.id: e for e in events}
    return ([(by_id[m.id], m.reason, m.score) for m in report.matches if m.id in by_id],
            matcher, None)


def merged(by_words: Sequence[Event], meant: Sequence[Meant],
           limit: int) -> tuple[list[Event], dict[int, str]]:
    """The hits, best first: found by both searches, then by words only (in the index's
    order), then by meaning only (most similar first); each with why, at most `limit`."""
    meaning = {event.id: (event, reason, score) for event, reason, score in meant}
    words = {event.id for event in by_words}
    both = [e for e in by_words if e.id in meaning]
    words_only = [e for e in by_words if e.id not in meaning]
    best = max((m[2] for m in meant if m[2] is not None), default=None)
    meaning_only = sorted((m for m in meant if m[0].id not in words
                           and (m[2] is None or best is None or m[2] >= RELATIVE * best)),
                          key=lambda m: (-(m[2] if m[2] is not None else 0.0), m[0].id))
    hits = [*both, *words_only, *(m[0] for m in meaning_only)][:limit]
    reasons: dict[int, str] = {}
    for event in hits:
        found = meaning.get(event.id)
        said = found[1] if found is not None else None
        if event.id in words:
            reasons[event.id] = said if said and "words" in said else (
                f"words; {said}" if said else "words")
        else:
            reasons[event.id] = said or "meaning"
    return hits, reasons


async def answer_from(c: CommandContext, matcher: Any, question: str,
                      hits: Sequence[Event]) -> str | None:
    """The answer to `question` from the hits, by the matcher's provider model; None with
    the local matcher (no model to ask). A failure is said in the answer's place."""
    gateway, model = getattr(matcher, "gateway", None), getattr(matcher, "model", None)
    if gateway is None or model is None or not hits:
        return None
    shown = "\n\n".join(f"[#{e.id} {e.kind}]\n{message_text(e.kind, e.payload)[:ANSWER_CHARS]}"
                        for e in sorted(hits, key=lambda e: e.id))
    try:
        completion = await gateway.complete(
            "recall", model, [{"role": "user", "content": f"Question: {question}\n\n{shown}"}],
            max_tokens=ANSWER_TOKENS, system=ANSWER_SYSTEM)
    except ProviderError as exc:
        return f"(no answer: {exc})"
    _record_usage(c, model, "recall", completion.usage)
    return completion.text.strip() or "(the model gave no answer)"


def _record_usage(c: CommandContext, model: str, purpose: str, usage: Any) -> None:
    if usage is not None:
        c.add("usage", {"model": model, "purpose": purpose, "input_tokens": usage.input_tokens,
                        "output_tokens": usage.output_tokens})
