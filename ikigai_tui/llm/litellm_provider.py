"""The litellm adapter: streaming, tool calls, usage; failures sorted into transient or not.

litellm is imported on the first request (or by a preload), in litellm's own thread (it
takes seconds and ~190 MB), with the settings that keep it offline and quiet (see
STACK.md); every request runs on that thread's event loop, its events relayed to the
caller's (llm/litellm_thread.py), so nothing litellm does can freeze the screen.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from ikigai_tui.core.provider import (
    ProviderError, Request, StreamEvent, TextDelta, ToolCall, TransientError, Usage,
)
from ikigai_tui.llm.errors import classify, missing_key, no_key_message, one_line, redact
from ikigai_tui.llm.litellm_import import import_litellm
from ikigai_tui.llm.litellm_thread import relay, warm

if TYPE_CHECKING:
    from ikigai_tui.llm.finish_watch import FinishWatch

class LiteLLMProvider:
    """One attempt per stream; retries are the gateway's (core/gateway.py)."""

    offline = False

    def __init__(self, model: str, *, api_base: str | None = None, timeout: float = 120.0) -> None:
        self.model = model
        self.api_base = api_base
        self.timeout = timeout

    def _options(self, request: Request) -> dict[str, Any]:
        system = [{"role": "system", "content": request.system}] if request.system else []
        kwargs: dict[str, Any] = dict(
            model=self.model, messages=[*system, *request.messages], stream=True,
            timeout=self.timeout,
            # Retries are the gateway's (bounded, visible): none in litellm nor the OpenAI SDK.
            num_retries=0, max_retries=0, stream_options={"include_usage": True},
        )
        if request.tools:
            kwargs["tools"] = request.tools
            if request.tool_choice is not None:
                kwargs["tool_choice"] = request.tool_choice
        if request.max_tokens is not None:
            kwargs["max_tokens"] = request.max_tokens
        if self.api_base:
            kwargs["api_base"] = self.api_base
        return kwargs

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        variable = missing_key(self.model)
        if variable is not None:  # litellm would fail it as a server error, worth retrying
            raise ProviderError(no_key_message(self.model, variable, self.api_base))
        async for event in relay(lambda: self._stream_here(request)):
            yield event

    async def _stream_here(self, request: Request) -> AsyncIterator[StreamEvent]:
        """The request itself, on litellm's loop (in its thread)."""
        litellm = import_litellm()
        warm(self.model)
        from ikigai_tui.llm.finish_watch import FinishWatch  # imports httpx: after litellm
        kwargs = self._options(request)
        delivered = False
        finish = FinishWatch(self.timeout) if self.model.startswith("gemini/") else None
        options = kwargs if finish is None else {**kwargs, "client": finish.client}
        try:
            response = await asyncio.wait_for(litellm.acompletion(**options), self.timeout)
            _raise_if_cancelled()
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
                _raise_if_cancelled()
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
        except (asyncio.CancelledError, GeneratorExit):
            raise
        except ProviderError as exc:
            if delivered:
                raise ProviderError(f"the reply was cut off: {exc}") from None
            raise
        except Exception as exc:  # litellm raises many types; classify() sorts them out
            _raise_if_cancelled()  # a failure of a request that was cancelled is the cancel
            failure = classify(_unwrap(exc), self.model, self.timeout)
            if delivered:
                raise ProviderError(f"the reply was cut off: {failure.message}") from None
            if failure.retryable:
                raise TransientError(failure.message, failure.retry_after,
                                     one_line(redact(failure.message))) from None
            raise ProviderError(failure.message) from None
        finally:
            if finish is not None:
                await finish.close()


def _raise_if_cancelled() -> None:
    """A cancel that arrived while litellm was connecting can be swallowed (the request
    then carries on to the end of its stream, holding its provider's slot): honour it."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


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
