"""Plain notifications the session sends to listeners (the TUI, the headless printer),
all of them: `Notice` is their one union; and `Notices`, who is told.

Immutable records as NamedTuples: a dataclass costs about 0.3 ms to create at import,
and these modules are on the path to the first frame.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
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


class SideDelta(NamedTuple):
    """A piece of a /btw side answer as it arrives (core/handlers/btw.py): never part of
    the agent's reply, nor of any context."""

    agent_id: str
    text: str


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


class CompactingNotice(NamedTuple):
    """Progress of an agent's compaction: requests done out of the total."""

    agent_id: str
    done: int
    total: int
    model: str


class CompactionNotice(NamedTuple):
    """A line about compaction for the agent's scrollback and headless output (not in the
    log): `kind` is "warning", "note" or "error"."""

    agent_id: str
    kind: str
    text: str


class StoreTrouble(NamedTuple):
    """The database's server is lost and being tried again (`line` says so), or back
    (`line` None): nothing is lost meanwhile; the front ends show it."""

    line: str | None


Notice = (EventsCommitted | AgentChanged | StreamDelta | RetryNotice | ErrorNotice | TurnFinished
          | MatchingNotice | CompactingNotice | CompactionNotice | StoreTrouble | SideDelta)
Listener = Callable[[Notice], None]
log = logging.getLogger(__name__)


class Notices:
    """Who is told: listeners subscribe and unsubscribe; each notice goes to every one of
    them, in order. A listener that raises is logged and the others are still told (a
    broken view must not stop a turn, nor keep the other views from hearing of it)."""

    def __init__(self) -> None:
        self.listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Tell `listener` from now on; returns what unsubscribes it."""
        self.listeners.append(listener)
        return lambda: self.unsubscribe(listener)

    def unsubscribe(self, listener: Listener) -> None:
        """No longer tell `listener` (nothing happens if it was not subscribed)."""
        try:
            self.listeners.remove(listener)
        except ValueError:
            pass

    def notify(self, notice: Notice) -> None:
        for listener in list(self.listeners):
            try:
                listener(notice)
            except Exception:
                log.exception("a listener failed on %s", type(notice).__name__)
