"""The panes of the main area: one per shown agent, side by side in the split view."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.containers import Horizontal

from ikigai_tui.tui.pages import AgentPages
from ikigai_tui.tui.widgets.pane import AgentPane

if TYPE_CHECKING:
    from ikigai_tui.tui.app import IkigaiApp

MAX_PANES = 4


class PaneManager:
    def __init__(self, app: IkigaiApp) -> None:
        self.app = app
        self.container = Horizontal(id="panes")
        self.panes: list[AgentPane] = []
        self.index = 0

    @property
    def active(self) -> AgentPane | None:
        return self.panes[self.index] if self.panes else None

    def all(self) -> list[AgentPane]:
        return list(self.panes)

    def showing(self, agent_id: str) -> list[AgentPane]:
        return [p for p in self.panes if p.agent_id == agent_id]

    async def _new_pane(self, agent_id: str) -> AgentPane:
        assert self.app.session is not None
        pane = AgentPane(agent_id, AgentPages(self.app.session, agent_id))
        return pane

    async def start(self, agent_id: str) -> None:
        """The first pane, with its latest page read before the screen is composed."""
        pane = await self._new_pane(agent_id)
        pane.scrollback.preload(await pane.scrollback.latest_page())
        pane.set_title(self._title(agent_id))
        self.panes = [pane]
        self.index = 0
        self.container = Horizontal(pane, id="panes")

    async def show(self, agent_id: str) -> None:
        """Show the agent in the active pane (or make the pane already showing it active)."""
        for i, pane in enumerate(self.panes):
            if pane.agent_id == agent_id:
                self.index = i
                self._mark_active()
                return
        pane = await self._new_pane(agent_id)
        if not self.panes:
            self.panes.append(pane)
            await self.container.mount(pane)
        else:
            old = self.panes[self.index]
            self.panes[self.index] = pane
            await self.container.mount(pane, after=old)
            await old.remove()
        self._mark_active()
        await pane.scrollback.load_latest()

    async def split(self) -> None:
        """Add a pane beside the others, for the next agent not shown yet."""
        session = self.app.session
        if session is None or len(self.panes) >= MAX_PANES:
            self.app.notify(f"At most {MAX_PANES} panes.", severity="warning")
            return
        shown = {p.agent_id for p in self.panes}
        focused = self.app.focused_agent
        children = [a.id for a in session.tree.children(focused)] if focused else []
        order = children + [a.id for a, _ in session.tree.walk()]
        candidate = next((a for a in order if a not in shown), None)
        if candidate is None:
            self.app.notify("Every agent is already shown. Fork one with /fork.", severity="warning")
            return
        pane = await self._new_pane(candidate)
        self.panes.append(pane)
        await self.container.mount(pane)
        self._mark_active()
        await pane.scrollback.load_latest()

    async def close_active(self) -> None:
        if len(self.panes) <= 1:
            return
        pane = self.panes.pop(self.index)
        self.index = min(self.index, len(self.panes) - 1)
        await pane.remove()
        self.app.focused_agent = self.panes[self.index].agent_id
        self._mark_active()

    async def cycle(self) -> None:
        if self.panes:
            self.index = (self.index + 1) % len(self.panes)
            self.app.focused_agent = self.panes[self.index].agent_id
            self._mark_active()

    def _mark_active(self) -> None:
        for i, pane in enumerate(self.panes):
            pane.set_class(i == self.index and len(self.panes) > 1, "-active")

    async def refresh_titles_and_rules(self) -> None:
        session = self.app.session
        if session is None:
            return
        tree = session.tree
        for pane in self.panes:
            agent = tree[pane.agent_id]
            window = await session.measure(agent.id)
            turns = window.pruned_turns
            if window.start is not None and window.start_index > 0:
                label = (f" window starts here · {turns:,} older turn{'s' if turns != 1 else ''} "
                         "not sent ")
                pane.scrollback.set_rule(window.start, label)
            else:
                pane.scrollback.set_rule(None, "")
            pane.set_title(self._title(agent.id))

    def _title(self, agent_id: str) -> str:
        session = self.app.session
        assert session is not None
        agent = session.tree[agent_id]
        return f"{session.tree.label(agent_id)} · {agent.status} · {session.model_of(agent)}"
