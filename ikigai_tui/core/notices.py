"""Plain notifications the session sends to listeners (the TUI, the headless printer)."""

from __future__ import annotations

from dataclasses import dataclass

from ikigai_tui.core.events import Event


@dataclass(frozen=True)
class EventsCommitted:
    events: list[Event]


@dataclass(frozen=True)
class AgentChanged:
    agent_id: str


@dataclass(frozen=True)
class StreamDelta:
    agent_id: str
    text: str


@dataclass(frozen=True)
class RetryNotice:
    agent_id: str
    attempt: int
    delay: float
    reason: str


@dataclass(frozen=True)
class ErrorNotice:
    agent_id: str
    message: str
    logged: bool = False  # also committed as an `error` event


@dataclass(frozen=True)
class TurnFinished:
    agent_id: str
    ok: bool
    error: str | None = None


Notice = EventsCommitted | AgentChanged | StreamDelta | RetryNotice | ErrorNotice | TurnFinished
