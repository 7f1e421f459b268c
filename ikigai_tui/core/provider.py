"""What the core asks of a model provider. Implemented in `ikigai_tui.llm`.

The records are NamedTuples, cheap to define at import (see core/notices.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, NamedTuple, Protocol

from ikigai_tui.core.limits import Limits


class Request(NamedTuple):
    model: str
    system: str
    messages: list[dict[str, Any]]  # OpenAI chat format, valid pairs only
    tools: list[dict[str, Any]] | tuple[()] = ()


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


class Provider(Protocol):
    model: str
    offline: bool

    def stream(self, request: Request) -> AsyncIterator[StreamEvent]: ...


class ProviderFactory(Protocol):
    def get(self, model: str) -> Provider: ...

    def limits(self, model: str) -> Limits: ...

    def check(self, model: str) -> None:
        """Raise ProviderError if `model` cannot be used."""
