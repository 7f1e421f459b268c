"""Which agents a refresh plans: the tree shows every loaded agent's window, but a
refresh plans again only the agents whose window may have changed since it was last
planned, and those on screen (the focused one for the gauge, the panes' for their rules).

Planning every loaded agent at every refresh made opening N agents N² plans: each
agent's load asks for a refresh. A window changes only through the agent's own events
or turn (AgentChanged, TurnFinished, EventsCommitted name the agent), or through the
token factor its model learns when a turn of that model ends (core/context.py learn):
a turn's end marks every agent of that model.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ikigai_tui.core.notices import AgentChanged, EventsCommitted, Notice, TurnFinished

if TYPE_CHECKING:
    from ikigai_tui.core.session import Session
    from ikigai_tui.core.tokens.window import Window


class UsagePlans:
    """Each loaded agent's last planned window, and the agents to plan again."""

    def __init__(self) -> None:
        self.windows: dict[str, Window] = {}
        self.stale: set[str] = set()

    def get(self, agent_id: str) -> Window | None:
        return self.windows.get(agent_id)

    def mark(self, notice: Notice, session: Session) -> None:
        """Note which agents' windows the notice may change."""
        if isinstance(notice, EventsCommitted):
            self.stale.update(e.agent_id for e in notice.events)
        elif isinstance(notice, AgentChanged):
            self.stale.add(notice.agent_id)
        elif isinstance(notice, TurnFinished):
            self.stale.add(notice.agent_id)
            agent = session.tree.agents.get(notice.agent_id)
            if agent is not None:  # the model's factor may have learned from the turn
                model = session.model_of(agent)
                self.stale.update(a.id for a in session.tree if session.model_of(a) == model)

    async def refresh(self, session: Session, on_screen: Iterable[str]) -> dict[str, Window]:
        """Plan the agents on screen, and the loaded ones that are stale or never planned;
        returns the windows of those on screen."""
        stale, self.stale = self.stale, set()
        shown: dict[str, Window] = {}
        for agent_id in dict.fromkeys(on_screen):
            if agent_id in session.tree:
                shown[agent_id] = self.windows[agent_id] = (await session.plan(agent_id)).window
        for agent, _depth in session.tree.walk():
            if agent.replayer is None or agent.id in shown:
                continue  # the tree shows usage once it is known
            if agent.id in stale or agent.id not in self.windows:
                self.windows[agent.id] = (await session.plan(agent.id)).window
        return shown
