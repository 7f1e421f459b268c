"""Messages typed while their agent is still replying: held, shown, sent when it is done.

Sending to an agent that is working does not refuse the message (and lose what was
typed): it is queued for that agent, shown above the input, and sent as soon as the
agent's turn ends. Esc or Up in the empty input takes the focused agent's queued message
back into the input. A second message queued for the same agent joins the first (one
message, paragraphs apart), as it would have been typed.
"""

from __future__ import annotations

from typing import Protocol

from rich.text import Text
from textual.widgets import Static

from ikigai_tui.tui.host import AppHost
from ikigai_tui.tui.safe_text import sanitize

PREVIEW = 200  # characters of a queued message shown


class Outbox:
    """The queued message of each agent (at most one: later ones join it)."""

    def __init__(self) -> None:
        self._queued: dict[str, str] = {}

    def put(self, agent_id: str, text: str) -> None:
        before = self._queued.get(agent_id)
        self._queued[agent_id] = text if before is None else f"{before}\n\n{text}"

    def get(self, agent_id: str | None) -> str | None:
        return None if agent_id is None else self._queued.get(agent_id)

    def take(self, agent_id: str | None) -> str | None:
        return None if agent_id is None else self._queued.pop(agent_id, None)

    def __contains__(self, agent_id: str) -> bool:
        return agent_id in self._queued


class QueuedLine(Static):
    """One line above the input: the focused agent's queued message, if any."""

    DEFAULT_CSS = """
    QueuedLine { height: 1; padding: 0 1; display: none; color: $text-warning;
                 background: $warning-muted; }
    QueuedLine.-shown { display: block; }
    """

    def show_queued(self, label: str | None, text: str | None) -> None:
        if text is None:
            self.remove_class("-shown")
            self.update("")
            return
        first = " ".join(sanitize(text[:PREVIEW]).split())
        if len(first) > 24:
            first = first[:23] + "…"
        line = Text(no_wrap=True, overflow="ellipsis")
        line.append("⧗ Queued", style="bold")
        line.append(f" for {sanitize(label)}" if label else "")
        line.append(f": {first} · Esc/↑ takes it back · sent when the reply ends")
        self.update(line)
        self.add_class("-shown")


class QueueHost(AppHost, Protocol):
    """What the app's side of the outbox uses of the app."""

    outbox: Outbox
    queued_line: QueuedLine

    def show_queued(self) -> None: ...


class QueueActions:
    """The app's side of the outbox (a mixin of `IkigaiApp`)."""

    def show_queued(self: QueueHost) -> None:
        """The line above the input: the focused agent's queued message, if any."""
        self.queued_line.show_queued(None, self.outbox.get(self.focused_agent))

    def take_back(self: QueueHost) -> str | None:
        """The focused agent's queued message, no longer queued (to edit in the input)."""
        text = self.outbox.take(self.focused_agent)
        if text is not None:
            self.show_queued()
        return text

    async def send_queued(self: QueueHost, agent_id: str, ok: bool) -> None:
        """The agent's turn ended: its queued message is sent now. After a failed reply
        it waits (the user may want /retry): still shown, and sent ahead of the next one."""
        from ikigai_tui.tui.submit import send

        session = self.session
        if session is None or agent_id not in self.outbox:
            return
        if not ok:
            for pane in self.panes.showing(agent_id):
                pane.scrollback.add_note("note", "The reply failed: your queued message was "
                                                 "not sent (Esc or ↑ takes it back).")
            return
        text = self.outbox.take(agent_id)
        self.show_queued()
        if text is not None:
            await send(self, session, agent_id, text)
