"""The core's notices as Textual messages, each posted to the widget that reacts to it.

The session tells its listeners with plain records (core/notices.py) on the event loop;
the app's listener only translates each into a message here and posts it: what a pane
shows goes to the panes (one queue, so a reply's streamed pieces, then its committed
events, are handled in the order they were told), what the tree, gauge and titles show
goes to the app as AgentsChanged. None of them bubble: each has one owner.
"""

from __future__ import annotations

from textual.message import Message

from ikigai_tui.core.events import Event
from ikigai_tui.core.notices import CompactionNotice
from ikigai_tui.core.notices import (
    AgentChanged, ErrorNotice, EventsCommitted, Notice, RetryNotice, StreamDelta, TurnFinished,
)


class LogUnreadable(Message):
    """A widget's read of the log met damage (or a failing disk): it bubbles to the app,
    which leaves with the error's one line, as when the damage is met while starting."""

    def __init__(self, error: Exception) -> None:
        super().__init__()
        self.error = error


class StreamArrived(Message, bubble=False):
    """A piece of the reply an agent is streaming."""

    def __init__(self, agent_id: str, text: str, index: int = 0) -> None:
        super().__init__()
        self.agent_id = agent_id
        self.text = text
        self.index = index  # the piece's number in its reply (0: not counted)


class EventsArrived(Message, bubble=False):
    """Events committed to the log (by this process or another), in id order."""

    def __init__(self, events: list[Event]) -> None:
        super().__init__()
        self.events = events


class AgentNote(Message, bubble=False):
    """A line for an agent's panes that is not in the log (an error that was not logged,
    a retry)."""

    def __init__(self, agent_id: str, kind: str, text: str) -> None:
        super().__init__()
        self.agent_id = agent_id
        self.kind = kind
        self.text = text


class AgentsChanged(Message, bubble=False):
    """An agent's status, usage or log changed: the tree, gauge and titles are stale."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, AgentsChanged)  # one refresh covers any number


def pane_message(notice: Notice) -> Message | None:
    """What the panes are told of a notice, if anything."""
    if isinstance(notice, StreamDelta):
        return StreamArrived(notice.agent_id, notice.text, notice.index)
    if isinstance(notice, EventsCommitted):
        return EventsArrived(notice.events)
    if isinstance(notice, ErrorNotice) and not notice.logged:
        return AgentNote(notice.agent_id, "error", notice.message)
    if isinstance(notice, CompactionNotice) and notice.kind != "done":  # "done": its command shows
        return AgentNote(notice.agent_id, "error" if notice.kind == "error" else "note", notice.text)
    if isinstance(notice, RetryNotice):
        return AgentNote(notice.agent_id, "note",
                         f"Retrying in {notice.delay:.1f}s (attempt {notice.attempt}): {notice.reason}")
    return None


def changes_agents(notice: Notice) -> bool:
    """Whether the notice makes the tree, the gauge or the titles stale."""
    return isinstance(notice, (AgentChanged, TurnFinished, EventsCommitted))
