"""Summarising a run of messages: side requests through the gateway, built to fit.

A request never holds more than the summarising model can take: the messages are packed
into pieces of whole exchanges sized to its input limit, less the instruction and the
room for the reply (core/matching/llm.plan_chunks; an exchange bigger than a piece has its
messages cut, head and tail kept). So a context that is already full, or far bigger than
the model's limit, is summarised all the same. One piece is one request; several are
summarised concurrently (at most `concurrency` at once, inside the gateway's per-provider
limit, with its retries), then their summaries are merged, in as many rounds as it takes
for the merge to fit. A request that fails after its retries fails the whole summary:
nothing half-summarised is ever proposed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ikigai_tui.core.compaction import prompt
from ikigai_tui.core.matching import Candidate
from ikigai_tui.core.matching.llm import plan_chunks
from ikigai_tui.core.provider import ProviderError, Usage

if TYPE_CHECKING:
    from ikigai_tui.core.gateway import Gateway

PURPOSE = "compact"
REPLY_TOKENS = 4_096  # room for one summary
MIN_ROOM = 512


@dataclass(frozen=True)
class Summary:
    text: str
    model: str  # what made it: a model name, or "offline (extractive)"
    pieces: int  # pieces of the messages summarised (1: one request)
    requests: int  # requests made, merges included (0: extractive)
    usage: Usage | None = None
    extractive: bool = False


ProgressFn = Callable[[int, int], None]  # (requests done, requests expected)


class Summariser:
    """Summaries by `model` through `gateway`; `count(text)` estimates its tokens."""

    def __init__(self, gateway: Gateway, model: str, *, input_limit: int,
                 count: Callable[[str], float], concurrency: int = 4,
                 piece_tokens: int | None = None, reply_tokens: int = REPLY_TOKENS) -> None:
        self.gateway = gateway
        self.model = model
        self.count = count
        self.concurrency = max(1, concurrency)
        self.reply_tokens = max(256, min(reply_tokens, input_limit // 4))
        fixed = count(prompt.system_prompt("")) + count(prompt.PIECE) + 64
        room = int(input_limit - self.reply_tokens - fixed)
        if piece_tokens:
            room = min(room, piece_tokens)
        self.room = max(MIN_ROOM, room)

    async def summarise(self, candidates: Sequence[Candidate], focus: str | None = None, *,
                        progress: ProgressFn | None = None,
                        cancellation: asyncio.Event | None = None,
                        instruction: str | None = None, purpose: str = PURPOSE) -> Summary:
        """`instruction`: added to the system prompt (a summary of pruned turns says how
        to take the earlier summary and how long it may be)."""
        extra = f"{focus or ''}{instruction or ''}"
        room = max(MIN_ROOM // 2, self.room - int(self.count(extra)))
        chunks = plan_chunks(candidates, room, self.count)
        system = prompt.system_prompt(focus) + (f"\n\n{instruction}" if instruction else "")
        limit = asyncio.Semaphore(self.concurrency)
        usages: list[Usage] = []
        done = 0
        expected = len(chunks) + (1 if len(chunks) > 1 else 0)
        if progress is not None:
            progress(0, expected)

        async def ask(text: str, what: str) -> str:
            nonlocal done
            async with limit:
                try:
                    completion = await self.gateway.complete(
                        purpose, self.model, [{"role": "user", "content": text}],
                        max_tokens=self.reply_tokens, cancellation=cancellation, system=system)
                except ProviderError as exc:
                    raise ProviderError(f"the summary failed{what}: {exc}") from None
            if completion.usage is not None:
                usages.append(completion.usage)
            reply = completion.text.strip()
            if not reply:
                raise ProviderError(f"the summary failed{what}: the model returned no text")
            done += 1
            if progress is not None:
                progress(done, max(expected, done))
            return reply

        total = len(chunks)
        # The artifacts the messages name, found in a thread while the requests are out.
        named = asyncio.ensure_future(
            asyncio.to_thread(prompt.artifacts, [c.text for c in candidates]))
        try:
            texts = await self._rounds(chunks, ask)
        except BaseException:
            named.cancel()
            raise
        return Summary(prompt.add_missing(texts[0], await named), self.model, total, done,
                       _sum(usages))

    async def _rounds(self, chunks, ask) -> list[str]:
        """The pieces' summaries, then merges until one is left."""
        total = len(chunks)
        texts = await _gather([
            ask(prompt.render_piece(chunk, n, total, cut),
                f" (part {n} of {total})" if total > 1 else "")
            for n, (chunk, cut) in enumerate(chunks, 1)])
        while len(texts) > 1:
            groups = self._groups(texts)
            texts = await _gather([ask(prompt.render_merge(g), " (merging the parts)") for g in groups])
        return texts

    def _groups(self, texts: list[str]) -> list[list[str]]:
        """Consecutive summaries packed into merge requests that fit; always at least two
        a group, so every round shortens the list (a summary too long is cut)."""
        limit = int(self.room * 4 * 0.9 / 2)  # characters of one summary when two must fit
        texts = [t if self.count(t) <= self.room / 2 else t[:limit] for t in texts]
        groups: list[list[str]] = []
        used = 0.0
        for text in texts:
            size = self.count(text) + 16
            if groups and (used + size <= self.room or len(groups[-1]) < 2):
                groups[-1].append(text)
                used += size
            else:
                groups.append([text])
                used = size
        if len(groups) > 1 and len(groups[-1]) == 1:
            groups[-2].extend(groups.pop())
        return groups


async def _gather(coros: list) -> list[str]:
    tasks = [asyncio.ensure_future(c) for c in coros]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


def _sum(usages: list[Usage]) -> Usage | None:
    if not usages:
        return None
    return Usage(sum(u.input_tokens for u in usages), sum(u.output_tokens for u in usages))


def extractive_summary(candidates: Sequence[Candidate], focus: str | None,
                       max_chars: int) -> Summary:
    """The offline model's summary: no request, made from the messages as written."""
    return Summary(prompt.extractive(candidates, focus, max_chars), "offline (extractive)",
                   1, 0, None, extractive=True)
