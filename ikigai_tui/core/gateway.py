"""Every LLM call goes through here: the turns' streams and the side requests (a
matcher, a summary) made outside any conversation.

One concurrency limit per provider (a semaphore, shared by turns and side requests),
one retry policy (bounded, with backoff and visible notices), and cancellation. The
providers themselves (core/provider.py, implemented in `ikigai_tui.llm`) make one
attempt each and say whether a failure is worth retrying (`TransientError`).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any, NamedTuple

from ikigai_tui.core.provider import (
    ProviderError, ProviderFactory, Request, Retrying, StreamEvent, TextDelta, ToolCall,
    TransientError, Usage,
)

DEFAULT_CONCURRENCY = 4  # requests in flight at once per provider


@dataclass(frozen=True)
class RetryPolicy:
    """How transient failures (rate limits, overloads, 5xx, timeouts) are retried."""

    max_retries: int = 4
    base_delay: float = 1.0
    max_delay: float = 30.0

    def backoff(self, attempt: int, retry_after: float | None) -> float:
        """Exponential with full jitter; the server's retry-after wins when it asks for more."""
        ceiling = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
        delay = random.uniform(ceiling / 2, ceiling)
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.max_delay))
        return delay


class Waiting(NamedTuple):
    """Progress: the request waits for a free slot of its provider."""

    purpose: str
    provider: str


class Completion(NamedTuple):
    text: str
    tool_calls: list[ToolCall]
    usage: Usage | None


class RequestCancelled(ProviderError):
    """A side request stopped by its cancellation event."""


Progress = Retrying | Waiting


def provider_name(model: str) -> str:
    return model.split("/", 1)[0] if "/" in model else model


class Gateway:
    def __init__(
        self,
        providers: ProviderFactory,
        *,
        concurrency: int | None = None,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    ) -> None:
        self.providers = providers
        # A factory may carry its settings (llm.providers.Providers does); else defaults.
        self.concurrency = max(1, concurrency or getattr(providers, "concurrency", DEFAULT_CONCURRENCY))
        self.retry = retry or getattr(providers, "retry", None) or RetryPolicy()
        self._sleep = sleep
        self._slots: dict[str, asyncio.Semaphore] = {}

    def slot(self, model: str) -> asyncio.Semaphore:
        name = provider_name(model)
        found = self._slots.get(name)
        if found is None:
            found = self._slots[name] = asyncio.Semaphore(self.concurrency)
        return found

    async def stream(self, request: Request, *, purpose: str = "turn"
                     ) -> AsyncIterator[StreamEvent | Waiting]:
        """The provider's stream, within its provider's limit, retried while nothing was
        delivered and the failure is transient. Yields Waiting and Retrying as progress."""
        provider = self.providers.get(request.model)
        slot = self.slot(request.model)
        if slot.locked():
            yield Waiting(purpose, provider_name(request.model))
        async with slot:
            attempt = 0
            while True:
                attempt += 1
                try:
                    async with aclosing(provider.stream(request)) as items:
                        async for item in items:
                            yield item
                    return
                except TransientError as exc:
                    if attempt > self.retry.max_retries:
                        tries = f" after {attempt} attempts" if attempt > 1 else ""
                        raise ProviderError(f"{exc}{tries}") from None
                    delay = self.retry.backoff(attempt, exc.retry_after)
                    yield Retrying(attempt, delay, exc.reason)
                    await self._sleep(delay)

    async def complete(
        self,
        purpose: str,
        model: str,
        messages: list[dict[str, Any]],
        tools: Sequence[dict[str, Any]] = (),
        tool_choice: str | dict[str, Any] | None = None,
        max_tokens: int | None = None,
        cancellation: asyncio.Event | None = None,
        *,
        system: str = "",
        progress: Callable[[Progress], None] | None = None,
    ) -> Completion:
        """One request outside the conversation: its text, tool calls and usage. Raises
        ProviderError (RequestCancelled when `cancellation` is set first)."""
        request = Request(model, system, messages, list(tools) if tools else (), tool_choice,
                          max_tokens)

        async def collect() -> Completion:
            parts: list[str] = []
            calls: list[ToolCall] = []
            usage: Usage | None = None
            async with aclosing(self.stream(request, purpose=purpose)) as items:
                async for item in items:
                    if isinstance(item, TextDelta):
                        parts.append(item.text)
                    elif isinstance(item, ToolCall):
                        calls.append(item)
                    elif isinstance(item, Usage):
                        usage = item
                    elif progress is not None:
                        progress(item)
            return Completion("".join(parts), calls, usage)

        if cancellation is None:
            return await collect()
        if cancellation.is_set():
            raise RequestCancelled(f"{purpose}: cancelled")
        work = asyncio.ensure_future(collect())
        stop = asyncio.ensure_future(cancellation.wait())
        try:
            await asyncio.wait({work, stop}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.cancel()
            if not work.done():
                work.cancel()
                await asyncio.gather(work, return_exceptions=True)
        if work.cancelled():
            raise RequestCancelled(f"{purpose}: cancelled")
        return work.result()
