"""What the core asks of a model provider. Implemented in `ikigai_tui.llm`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class Request:
    model: str
    system: str
    messages: list[dict[str, Any]]  # OpenAI chat format, valid pairs only
    tools: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ToolCall:
    call_id: str
    name: str
    arguments: str  # JSON text, as the model wrote it


@dataclass(frozen=True)
class Usage:
    input_tokens: int
    output_tokens: int


@dataclass(frozen=True)
class Retrying:
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


@dataclass(frozen=True)
class Limits:
    input: int  # the model's input limit in tokens
    reserve: int  # room kept for the reply
    known: bool  # False: an assumed size for a model no map lists


class ProviderFactory(Protocol):
    def get(self, model: str) -> Provider: ...

    def limits(self, model: str) -> Limits: ...

    def check(self, model: str) -> None:
        """Raise ProviderError if `model` cannot be used."""
