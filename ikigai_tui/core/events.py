"""Event kinds and the shapes that travel between the store, replay and listeners."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Conversation kinds that enter an agent's context when appended.
CONTEXT_MESSAGE_KINDS = frozenset({"user", "assistant", "tool_call", "tool_result"})
# Every conversation kind; `system` sets the system prompt instead of entering the context.
MESSAGE_KINDS = CONTEXT_MESSAGE_KINDS | {"system"}
# Metadata kinds that change the view and that /undo may reverse.
UNDOABLE_KINDS = frozenset({"clear", "rewind", "filter", "compact"})
METADATA_KINDS = frozenset(
    {
        "clear", "mark", "rewind", "filter", "compact", "undo", "fork", "kill", "mail",
        "mail_read", "model", "pin", "unpin", "usage", "command", "interrupted", "error",
    }
)

# One event as replay consumes it: (id, kind, payload). Kept a plain tuple because
# opening an agent replays hundreds of thousands of them.
EventRow = tuple[int, str, dict]


@dataclass(frozen=True, slots=True)
class Event:
    """One committed row of the log."""

    id: int
    agent_id: str
    kind: str
    payload: dict[str, Any]
    created_at: float

    @property
    def row(self) -> EventRow:
        return (self.id, self.kind, self.payload)


@dataclass(frozen=True, slots=True)
class EventRef:
    """Placeholder in a payload for the id of an earlier event of the same write batch."""

    index: int


@dataclass(frozen=True, slots=True)
class AgentRecord:
    id: str
    parent_id: str | None
    name: str | None
    model: str
    status: str
    created_at: float
    fork_event_id: int | None
    budget: int | None = None


@dataclass(slots=True)
class NewEvent:
    agent_id: str
    kind: str
    payload: dict[str, Any]


@dataclass(slots=True)
class WriteBatch:
    """Everything one action writes, committed in one transaction or not at all."""

    events: list[NewEvent] = field(default_factory=list)
    new_agents: list[AgentRecord] = field(default_factory=list)
    # (agent_id, column, value) with column in {"status", "model", "name"}
    agent_updates: list[tuple[str, str, Any]] = field(default_factory=list)
    # (model, factor, samples): token-count correction learned with this batch's usage
    factors: list[tuple[str, float, int]] = field(default_factory=list)

    def add(self, agent_id: str, kind: str, payload: dict[str, Any]) -> int:
        """Queue an event; returns its index for EventRef."""
        self.events.append(NewEvent(agent_id, kind, payload))
        return len(self.events) - 1


def message_text(kind: str, payload: dict) -> str:
    """The human-readable text of a message event."""
    if kind == "tool_call":
        return f"{payload.get('name', '?')}({payload.get('arguments', '')})"
    return str(payload.get("content") or "")
