"""What the core asks of a model provider. Implemented in `ikigai_tui.llm`.

The records are NamedTuples, cheap to define at import (see core/notices.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, NamedTuple, Protocol

from ikigai_tui.core.tokens.limits import Limits


class Request(NamedTuple):
    model: str
    system: str
    messages: list[dict[str, Any]]  # OpenAI chat format, valid pairs only
    tools: list[dict[str, Any]] | tuple[()] = ()
    # "auto" (None), "none", "required", or {"type": "function", "function": {"name": N}}
    tool_choice: str | dict[str, Any] | None = None
    max_tokens: int | None = None  # a cap on the reply; None: the provider's default


class TextDelta(NamedTuple):
    text: str


class ToolCall(NamedTuple):
    call_id: str
    name: str
    arguments: str  # JSON text, as the model wrote it


class Usage(NamedTuple):
    input_tokens: int
    output_tokens: int


class Retrying(NamedTuple):
    """A transient failure being retried; shown to the user as it happens."""

    attempt: int
    delay: float
    reason: str


StreamEvent = TextDelta | ToolCall | Usage | Retrying


class ProviderError(Exception):
    """A failure to report in one line, saying what to do."""


class TransientError(ProviderError):
    """A failure before anything was delivered that may pass (a rate limit, an overload,
    a 5xx, a timeout): the gateway retries it (core/gateway.py)."""

    def __init__(self, message: str, retry_after: float | None = None, reason: str | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after  # what the server asked for, in seconds
        self.reason = reason or message  # the one line shown while retrying


def requires_tool(request: Request) -> str | None:
    """The tool a request's tool_choice forces: its name, "" for any tool, None if none."""
    choice = request.tool_choice
    if not request.tools or choice in (None, "auto", "none"):
        return None
    if isinstance(choice, dict):
        return str((choice.get("function") or {}).get("name") or "")
    return ""


class Provider(Protocol):
    model: str
    offline: bool

    def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        """One attempt: text deltas, then tool calls, then usage. Honours the request's
        tools, tool_choice and max_tokens. Raises TransientError for a failure worth
        retrying (nothing delivered yet), ProviderError otherwise."""
        ...


class ProviderFactory(Protocol):
    def get(self, model: str) -> Provider: ...

    def limits(self, model: str) -> Limits: ...

    def check(self, model: str) -> str | None:
        """Raise ProviderError if `model` cannot be used; may return its full name (an
        alias or a bare name resolved)."""
