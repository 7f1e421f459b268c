"""Event kinds and the shapes that travel between the store, replay and listeners."""

from __future__ import annotations

from typing import Any, NamedTuple

# Conversation kinds that enter an agent's context when appended.
CONTEXT_MESSAGE_KINDS = frozenset({"user", "assistant", "tool_call", "tool_result"})
# Every conversation kind; `system` sets the system prompt instead of entering the context.
MESSAGE_KINDS = CONTEXT_MESSAGE_KINDS | {"system"}
# Metadata kinds that change what is sent and that /undo may reverse.
# A `memory` event records a change to the memories folder (core/memory): outside the
# context, but /undo reverses the latest one like a context change.
# A `permission` event ({tool, rule}) records the user's "always for this agent" for a
# tool (core/tools/permissions.py): inherited by forks, withdrawn by /undo.
# A `tool_output` event ({action: clear, ids, tokens} or {action: restore, ids}) clears
# the text sent of tool results (a one-line stub instead; the log keeps the text), or
# brings one back: /forget --tool-results, its automatic rule, /restore ID.
UNDOABLE_KINDS = frozenset({"clear", "rewind", "filter", "compact", "pin", "unpin", "budget",
                            "memory", "permission", "tool_output"})
# A `pruned_summary` event records a summary of the turns the sliding window dropped
# (core/compaction/pruned.py): history that the request may carry, never a change to the
# context (the replay ignores it).
# A `cwd` event sets the agent's workspace, the folder its file tools work in (/cwd, or
# --cwd at the start): a setting, not a message; a fork inherits it. /undo does not
# reverse it (set it again).
# A `btw` event ({question, answer, model}) records a /btw side exchange: shown and kept,
# never sent in any request (the replay ignores it; its usage is a `usage` event).
# Changes to what is sent that /undo does not reverse (set them again instead): an /undo
# that reaches past one of them says so.
NOT_UNDOABLE_CHANGES = frozenset({"system", "model"})
METADATA_KINDS = frozenset(
    {
        "clear", "mark", "rewind", "filter", "compact", "undo", "fork", "kill", "mail",
        "mail_read", "model", "pin", "unpin", "budget", "usage", "command", "interrupted",
        "error", "memory", "pruned_summary", "permission", "cwd", "tool_output", "rename", "btw",
        "mail_mode", "revive",  # /mail's setting (core/mailbox.py); /revive of a dead agent
    }
)

# One event as replay consumes it: (id, kind, payload). Kept a plain tuple because
# opening an agent replays hundreds of thousands of them.
EventRow = tuple[int, str, dict]


class Event(NamedTuple):
    """One committed row of the log."""

    id: int
    agent_id: str
    kind: str
    payload: dict[str, Any]
    created_at: float

    @property
    def row(self) -> EventRow:
        return (self.id, self.kind, self.payload)


class EventRef:
    """Placeholder in a payload for the id of an earlier event of the same write batch.

    Not a tuple: JSON must never take it for a value.
    """

    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index

    def __eq__(self, other: object) -> bool:
        return isinstance(other, EventRef) and other.index == self.index

    def __hash__(self) -> int:
        return hash((EventRef, self.index))

    def __repr__(self) -> str:
        return f"EventRef({self.index})"


class AgentRecord(NamedTuple):
    id: str
    parent_id: str | None
    name: str | None
    model: str
    status: str
    created_at: float
    fork_event_id: int | None
    budget: int | None = None


class NewEvent(NamedTuple):
    agent_id: str
    kind: str
    payload: dict[str, Any]


class WriteBatch:
    """Everything one action writes, committed in one transaction or not at all."""

    __slots__ = ("events", "new_agents", "agent_updates", "factors", "key")

    def __init__(self) -> None:
        self.events: list[NewEvent] = []
        self.new_agents: list[AgentRecord] = []
        # (agent_id, column, value) with column in {"status", "model", "name"}
        self.agent_updates: list[tuple[str, str, Any]] = []
        # (model, factor, samples): token-count correction learned with this batch's usage
        self.factors: list[tuple[str, float, int]] = []
        # Its idempotency key, given by a store that can lose a commit's acknowledgement
        # (PostgreSQL): sent again, a batch already committed is not written twice.
        self.key: str | None = None

    def add(self, agent_id: str, kind: str, payload: dict[str, Any]) -> int:
        """Queue an event; returns its index for EventRef."""
        self.events.append(NewEvent(agent_id, kind, payload))
        return len(self.events) - 1


def message_text(kind: str, payload: dict) -> str:
    """The human-readable text of a message event."""
    if kind == "tool_call":
        return f"{payload.get('name', '?')}({payload.get('arguments', '')})"
    return str(payload.get("content") or "")
