"""The litellm adapter: streaming, tool calls, usage, bounded retries with backoff.

litellm is imported on the first request, in a thread (it takes seconds and ~190 MB),
with the settings that keep it offline and quiet (see STACK.md).
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ikigai_tui.core.provider import (
    ProviderError, Request, Retrying, StreamEvent, TextDelta, ToolCall, Usage,
)
from ikigai_tui.llm.errors import classify, one_line, redact

if TYPE_CHECKING:
    from ikigai_tui.llm.finish_watch import FinishWatch

_lock = threading.Lock()
_litellm: Any = None


def import_litellm() -> Any:
    """Import litellm once, configured to fetch nothing and print nothing."""
    global _litellm
    with _lock:
        if _litellm is None:
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            os.environ.setdefault("LITELLM_MODE", "PRODUCTION")
            import litellm

            litellm.suppress_debug_info = True
            litellm.disable_hf_tokenizer_download = True
            litellm.drop_params = True
            for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm"):
                logger = logging.getLogger(name)
                logger.handlers.clear()
                logger.addHandler(logging.NullHandler())
                logger.propagate = False
            _litellm = litellm
        return _litellm


class LiteLLMProvider:
    offline = False

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        timeout: float = 120.0,
        max_retries: int = 4,
        base_delay: float = 1.0,
        max_delay: float = 30.0,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    ) -> None:
        self.model = model
        self.api_base = api_base
        self.timeout = timeout
        self.max_retries = max_retries
        self.base_delay = base_delay
        self.max_delay = max_delay
        self._sleep = sleep

    def backoff(self, attempt: int, retry_after: float | None) -> float:
        """Exponential with full jitter; the server's retry-after wins when it asks for more."""
        ceiling = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
        delay = random.uniform(ceiling / 2, ceiling)
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.max_delay))
        return delay

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        litellm = await asyncio.to_thread(import_litellm)
        from ikigai_tui.llm.finish_watch import FinishWatch  # imports httpx: after litellm
        messages = [{"role": "system", "content": request.system}, *request.messages]
        kwargs: dict[str, Any] = dict(
            model=self.model, messages=messages, stream=True, timeout=self.timeout,
            # Retries are ours (bounded, visible): none in litellm nor in the OpenAI SDK.
            num_retries=0, max_retries=0, stream_options={"include_usage": True},
        )
        if request.tools:
            kwargs["tools"] = request.tools
        if self.api_base:
            kwargs["api_base"] = self.api_base
        attempt = 0
        while True:
            attempt += 1
            delivered = False
            finish = FinishWatch(self.timeout) if self.model.startswith("gemini/") else None
            options = kwargs if finish is None else {**kwargs, "client": finish.client}
            try:
                response = await asyncio.wait_for(litellm.acompletion(**options), self.timeout)
                calls: dict[int, dict[str, Any]] = {}
                usage: Usage | None = None
                chunks = response.__aiter__()
                while True:
                    # Our own inactivity watchdog: litellm ignores `timeout` for some
                    # streams (Gemini), and a stalled stream must not hang the turn.
                    try:
                        chunk = await asyncio.wait_for(chunks.__anext__(), self.timeout)
                    except StopAsyncIteration:
                        break
                    found = getattr(chunk, "usage", None)
                    if found is not None and getattr(found, "prompt_tokens", None) is not None:
                        usage = Usage(int(found.prompt_tokens or 0), int(found.completion_tokens or 0))
                    if not chunk.choices:
                        continue
                    delta = chunk.choices[0].delta
                    text = getattr(delta, "content", None)
                    if text:
                        delivered = True
                        yield TextDelta(text)
                    for piece in getattr(delta, "tool_calls", None) or []:
                        _merge_call(calls, piece)
                problem = _cut_short(response, self.model, finish)
                if problem:
                    raise ProviderError(problem)
                for index in sorted(calls):
                    call = calls[index]
                    yield ToolCall(call["id"] or f"call_{index}", call["name"], call["arguments"])
                if usage is not None:
                    yield Usage(usage.input_tokens, usage.output_tokens)
                return
            except (asyncio.CancelledError, GeneratorExit):
                raise
            except ProviderError as exc:
                if delivered:
                    raise ProviderError(f"the reply was cut off: {exc}") from None
                raise
            except Exception as exc:  # litellm raises many types; classify() sorts them out
                failure = classify(_unwrap(exc), self.model, self.timeout)
                if delivered:
                    raise ProviderError(f"the reply was cut off: {failure.message}") from None
                if not failure.retryable or attempt > self.max_retries:
                    tries = f" after {attempt} attempts" if attempt > 1 else ""
                    raise ProviderError(f"{failure.message}{tries}") from None
                delay = self.backoff(attempt, failure.retry_after)
                yield Retrying(attempt, delay, one_line(redact(failure.message)))
                await self._sleep(delay)
            finally:
                if finish is not None:
                    await finish.close()


def _unwrap(exc: BaseException) -> BaseException:
    """litellm wraps stream failures in MidStreamFallbackError; the cause is inside."""
    inner = getattr(exc, "original_exception", None)
    if type(exc).__name__ == "MidStreamFallbackError" and isinstance(inner, BaseException):
        return inner
    if isinstance(exc, asyncio.TimeoutError):
        return _StreamTimeout()
    return exc


class _StreamTimeout(Exception):
    status_code = 408


# Providers whose streams are checked for a finish reason: the paths the fake-provider
# tests pin. Elsewhere litellm may never record one, and every reply would be flagged.
_FINISH_CHECKED = ("openai/", "anthropic/", "gemini/")
UNREADABLE = "the stream ended early on data that could not be read"
NO_FINISH = "the stream ended without a finish reason"


def _cut_short(response: Any, model: str, finish: FinishWatch | None) -> str | None:
    """Why a stream that ended quietly is incomplete, or None. litellm 1.105.3 (pinned)
    ends Anthropic and Gemini streams quietly on data it cannot parse, leaving its parser
    in accumulation mode; and on every format it makes up a finish ("stop") for a stream
    that never sent one. OpenAI and Anthropic: `received_finish_reason` keeps only what
    the provider sent. Gemini: litellm keeps nothing (every chunk it parses says "stop"),
    so FinishWatch reads the wire. The fake-provider tests pin all of this."""
    inner = getattr(response, "completion_stream", None)
    if getattr(inner, "chunk_type", None) == "accumulated_json":
        return UNREADABLE
    if finish is not None:
        return None if finish.seen else NO_FINISH
    if model.startswith(_FINISH_CHECKED) and getattr(response, "received_finish_reason", None) is None:
        return NO_FINISH
    return None


def _merge_call(calls: dict[int, dict[str, Any]], piece: Any) -> None:
    """Tool calls arrive in fragments: id and name first, then pieces of the arguments."""
    index = getattr(piece, "index", None)
    if index is None:
        index = len(calls)
    call = calls.setdefault(index, {"id": None, "name": "", "arguments": ""})
    if getattr(piece, "id", None):
        call["id"] = piece.id
    function = getattr(piece, "function", None)
    if function is not None:
        if getattr(function, "name", None):
            call["name"] = function.name
        if getattr(function, "arguments", None):
            call["arguments"] += function.arguments
