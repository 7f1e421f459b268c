"""Plain notifications the session sends to listeners (the TUI, the headless printer).

Immutable records as NamedTuples: a dataclass costs about 0.3 ms to create at import,
and these modules are on the path to the first frame.
"""

from __future__ import annotations

from typing import NamedTuple

from ikigai_tui.core.events import Event


class EventsCommitted(NamedTuple):
    events: list[Event]
    foreign: bool = False  # committed by another process (arrived through the feed)


class AgentChanged(NamedTuple):
    agent_id: str


class StreamDelta(NamedTuple):
    agent_id: str
    text: str
    index: int = 0  # the piece's number in its reply (1, 2, ...; see AgentRuntime.reply)


class RetryNotice(NamedTuple):
    agent_id: str
    attempt: int
    delay: float
    reason: str


class ErrorNotice(NamedTuple):
    agent_id: str
    message: str
    logged: bool = False  # also committed as an `error` event


class TurnFinished(NamedTuple):
    agent_id: str
    ok: bool
    error: str | None = None


class MatchingNotice(NamedTuple):
    """A matcher's progress for the agent's /forget or /remember: parts done of total."""

    agent_id: str
    done: int
    total: int
    matcher: str
    criteria: str = ""


Notice = (EventsCommitted | AgentChanged | StreamDelta | RetryNotice | ErrorNotice | TurnFinished
          | MatchingNotice)
