"""The LLM matcher: side requests that ask a model which messages match the criteria.

Each request holds a system instruction, the criteria and one chunk of the context with
every message labelled by its id and role; the model answers through one tool,
`report_matches`, required with `tool_choice`: never free text to parse. Chunks are
whole exchanges, sized to the model's input limit less the instruction and the reply's
room, so every message is reviewed exactly once; they run concurrently (at most
`concurrency` in flight, inside the gateway's per-provider limit, with its retries).
Ids a model names that are not in its chunk are dropped and counted. A chunk that still
fails after its retries fails the whole match: nothing half-reviewed is ever applied.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ikigai_tui.core.matching import (
    FORGET, RECALL, Candidate, Match, MatchProgress, MatchReport, ProgressFn, exchanges,
    render_message,
)
from ikigai_tui.core.provider import ProviderError, Usage

if TYPE_CHECKING:
    from ikigai_tui.core.gateway import Completion, Gateway

PURPOSE = "match"
VERBS = {FORGET: "forget", RECALL: "find again"}  # the user wants to ... the messages
DEFAULT_CONCURRENCY = 4
REPLY_TOKENS = 4_096  # room for the tool call's arguments (ids and short reasons)
LABEL_TOKENS = 12  # a message's "[#ID role]" label and separators, over its own count
MIN_MESSAGE_CHARS = 200  # a message cut to fit an oversized exchange keeps at least this

SYSTEM = (
    "You review part of a conversation for its user, who wants to {verb} the messages that "
    "match their criteria. Each message below is labelled [#ID ROLE]. Decide for every "
    "message whether it matches the criteria: judge by meaning, not only by shared words; "
    "a message matches when it is about what the criteria describe. Report the matching "
    "messages' ids with a short reason each through the report_matches tool, and nothing "
    "else. Report an empty list when nothing matches. Never report an id that is not "
    "shown below."
)

REPORT_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "report_matches",
        "description": "Report the messages that match the criteria (an empty list if none).",
        "parameters": {
            "type": "object",
            "properties": {
                "matches": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "id": {"type": "integer", "description": "The message's id"},
                            "reason": {"type": "string",
                                       "description": "Why it matches, in a few words"},
                        },
                        "required": ["id", "reason"],
                    },
                },
            },
            "required": ["matches"],
        },
    },
}
TOOL_CHOICE: dict[str, Any] = {"type": "function", "function": {"name": "report_matches"}}


def render_chunk(criteria: str, chunk: Sequence[Candidate], limit: int | None = None) -> str:
    body = "\n\n".join(render_message(c, limit) for c in chunk)
    return (f"Criteria: {criteria}\n\nMessages (ids {chunk[0].id} to {chunk[-1].id}):\n\n{body}"
            "\n\nCall report_matches with the ids of the messages that match the criteria.")


def plan_chunks(candidates: Sequence[Candidate], room: int,
                count: Callable[[str], float]) -> list[tuple[list[Candidate], int | None]]:
    """Whole exchanges packed in order into chunks of at most `room` tokens; an exchange
    bigger than `room` is a chunk of its own, its messages cut (head and tail kept) to
    fit. Returns (chunk, per-message character limit or None)."""
    chunks: list[tuple[list[Candidate], int | None]] = []
    current: list[Candidate] = []
    used = 0.0
    for exchange in exchanges(candidates):
        size = sum((count(render_message(c)) if c.tokens is None else c.tokens + LABEL_TOKENS)
                   for c in exchange)
        if size > room:
            if current:
                chunks.append((current, None))
                current, used = [], 0.0
            chunks.append((exchange, _cut_to_fit(exchange, room, count)))
            continue
        if current and used + size > room:
            chunks.append((current, None))
            current, used = [], 0.0
        current.extend(exchange)
        used += size
    if current:
        chunks.append((current, None))
    return chunks


def _cut_to_fit(exchange: list[Candidate], room: int, count: Callable[[str], float]) -> int:
    """A character limit per message that brings the exchange within `room` tokens."""
    chars = sum(len(c.text) for c in exchange) or 1
    tokens = sum(count(c.text) for c in exchange) or 1.0
    per_token = chars / tokens
    return max(MIN_MESSAGE_CHARS, int(room * per_token * 0.9 / len(exchange)))


def read_report(completion: Completion, allowed: set[int]) -> tuple[list[Match], int]:
    """The matches of a report_matches call (ids outside `allowed` dropped and counted).
    Raises ProviderError when the reply is not such a call."""
    calls = [c for c in completion.tool_calls if c.name == "report_matches"]
    if not calls:
        raise ProviderError("the matcher did not answer with report_matches")
    matches: dict[int, Match] = {}
    dropped = 0
    for call in calls:
        try:
            arguments = json.loads(call.arguments or "{}")
        except json.JSONDecodeError:
            raise ProviderError("the matcher's report_matches arguments are not valid JSON") from None
        found = arguments.get("matches") if isinstance(arguments, dict) else None
        if not isinstance(found, list):
            raise ProviderError("the matcher's report_matches call has no 'matches' list")
        for item in found:
            ident = item.get("id") if isinstance(item, dict) else item
            if isinstance(ident, str) and ident.lstrip("#").isdigit():
                ident = int(ident.lstrip("#"))
            if not isinstance(ident, int) or isinstance(ident, bool) or ident not in allowed:
                dropped += 1
                continue
            reason = item.get("reason") if isinstance(item, dict) else None
            matches.setdefault(ident, Match(ident, reason if isinstance(reason, str) else None))
    return list(matches.values()), dropped


class LlmMatcher:
    def __init__(self, gateway: Gateway, model: str, *, input_limit: int,
                 count: Callable[[str], float], concurrency: int = DEFAULT_CONCURRENCY,
                 chunk_tokens: int | None = None, reply_tokens: int = REPLY_TOKENS) -> None:
        self.gateway = gateway
        self.model = model
        self.count = count
        self.concurrency = max(1, concurrency)
        self.reply_tokens = reply_tokens
        fixed = count(SYSTEM) + count(render_chunk("", [Candidate(0, "user", "")])) + 64
        room = int(input_limit - reply_tokens - fixed)
        if chunk_tokens:
            room = min(room, chunk_tokens)
        self.room = max(256, room)

    @property
    def name(self) -> str:
        return f"{self.model} (LLM)"

    async def match(self, criteria: str, mode: str, candidates: Sequence[Candidate], *,
                    progress: ProgressFn | None = None,
                    cancellation: asyncio.Event | None = None) -> MatchReport:
        if not candidates:
            return MatchReport((), self.name, 0)
        room = self.room - int(self.count(criteria))
        chunks = plan_chunks(candidates, max(64, room), self.count)
        total = len(chunks)
        limit = asyncio.Semaphore(self.concurrency)
        done = 0
        system = SYSTEM.format(verb=VERBS.get(mode, "keep only"))
        if progress is not None:
            progress(MatchProgress(0, total))

        async def review(number: int, chunk: list[Candidate], cut: int | None):
            nonlocal done
            async with limit:
                try:
                    completion = await self.gateway.complete(
                        PURPOSE, self.model,
                        [{"role": "user", "content": render_chunk(criteria, chunk, cut)}],
                        tools=[REPORT_TOOL], tool_choice=TOOL_CHOICE,
                        max_tokens=self.reply_tokens, cancellation=cancellation, system=system)
                    found = read_report(completion, {c.id for c in chunk})
                except ProviderError as exc:
                    where = f" (part {number} of {total})" if total > 1 else ""
                    raise ProviderError(f"the matcher failed{where}: {exc}") from None
            done += 1
            if progress is not None:
                progress(MatchProgress(done, total))
            return found, completion.usage

        tasks = [asyncio.ensure_future(review(n, chunk, cut))
                 for n, (chunk, cut) in enumerate(chunks, 1)]
        try:
            results = await asyncio.gather(*tasks)
        except BaseException:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        order = {c.id: n for n, c in enumerate(candidates)}
        matches = sorted((m for (found, _dropped), _usage in results for m in found),
                         key=lambda m: order[m.id])
        dropped = sum(d for (_found, d), _usage in results)
        usage = _sum_usage(u for _found, u in results)
        return MatchReport(tuple(matches), self.name, total, dropped, usage)


def _sum_usage(usages) -> Usage | None:
    seen = [u for u in usages if u is not None]
    if not seen:
        return None
    return Usage(sum(u.input_tokens for u in seen), sum(u.output_tokens for u in seen))
