"""Who needs you, in the full screen (a mixin of IkigaiApp over `AttentionHost`): each
agent's state (tui/agent_state.py) for the tree's rows and the overview; Ctrl+N focuses
the next agent that needs you; F6 opens the overview (tui/screens/overview.py); the news
not seen and the tree's hidden dead are kept across restarts (tui/ui_state.py's
AttentionKeeper); a background agent that comes to need you is told on the desktop too,
with the config's `notify` (tui/desktop.py), written through the app's driver.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Protocol

from textual.screen import ModalScreen

from ikigai_tui.core.notices import Notice, StreamDelta
from ikigai_tui.tui.agent_state import AgentState, Doings, agent_state
from ikigai_tui.tui.host import AppHost
from ikigai_tui.tui.safe_text import sanitize
from ikigai_tui.tui.tree_rows import AgentRow, agent_row
from ikigai_tui.tui.ui_state import AttentionKeeper
from ikigai_tui.tui.unseen import Unseen

if TYPE_CHECKING:
    from textual.driver import Driver
    from textual.screen import Screen

    from ikigai_tui.config import Config
    from ikigai_tui.core.session import Session
    from ikigai_tui.tui.usage_plans import UsagePlans
    from ikigai_tui.tui.widgets.agent_tree import AgentTreeView

__all__ = ["Attention", "AttentionHost", "NOBODY"]

NOBODY = "Nobody needs you"


class AttentionHost(AppHost, Protocol):
    config: Config
    unseen: Unseen
    doings: Doings
    usage_plans: UsagePlans
    agent_tree: AgentTreeView
    attention_keeper: AttentionKeeper
    _desktop: tuple[str, bool] | None | bool

    @property
    def screen(self) -> Screen[object]: ...

    @property
    def _driver(self) -> Driver | None: ...

    async def focus_agent(self, agent_id: str) -> None: ...

    def notify(self, message: str, *, title: str = "", severity: str = "information",
               timeout: float | None = None, markup: bool = True) -> None: ...

    def push_screen(self, screen: object, callback: object = None) -> object: ...

    def agent_states(self, session: Session) -> dict[str, AgentState]: ...

    def _notice_desktop(self, text: str) -> None: ...

    def _asked(self, agent_id: str) -> None: ...


class Attention:
    def _start_attention(self: AttentionHost, config: Config) -> None:
        """The news left unseen last time on this database, the tree's hidden dead."""
        self.attention_keeper = keeper = AttentionKeeper(self, config)
        self.unseen = Unseen(dict(keeper.saved_news), kept=keeper.keep_news)
        self.doings = Doings(changed=self.schedule_refresh, asked=self._asked)
        self._desktop = False  # not decided yet (tui/desktop.py), then None or the protocol

    def _attention_ready(self: AttentionHost, session: Session, shown: list[str]) -> None:
        """Once the session is open: news of agents gone since is dropped, and that of
        the agents the panes show again is seen."""
        self.unseen.keep_only(lambda agent_id: agent_id in session.tree)
        self.unseen.seen(shown)

    def _heed(self: AttentionHost, notice: Notice) -> None:
        """What the states follow of a notice: the tool running, a matcher, and the first
        piece of a reply (streaming); the tree is refreshed for it (not on every piece)."""
        if self.doings.heard(notice) or (isinstance(notice, StreamDelta) and notice.index == 1):
            self.schedule_refresh()

    def agent_states(self: AttentionHost, session: Session) -> dict[str, AgentState]:
        """Every agent's state, by id (tui/agent_state.py decides it)."""
        doings, news = self.doings, self.unseen.news
        return {agent.id: agent_state(doings.facts(
            agent.id, dead=agent.dead, working=agent.status == "working",
            streaming=agent.turn.reply is not None and bool(agent.turn.reply),
            news=news.get(agent.id))) for agent in session.tree}

    def tree_rows(self: AttentionHost, session: Session) -> list[AgentRow]:
        """Every agent's row, parents first, with its state."""
        tree, states = session.tree, self.agent_states(session)
        return [agent_row(agent, tree.label(agent.id), self.usage_plans.get(agent.id),
                          session.usages.now(agent.id), agent.id in self.unseen,
                          states[agent.id])
                for agent, _depth in tree.walk()]

    # -- Ctrl+N, F6 -------------------------------------------------------------------

    async def action_next_needing(self: AttentionHost) -> None:
        """Focus the next agent that needs you after the focused one, in tree order."""
        session = self.session
        if session is None or isinstance(self.screen, ModalScreen):
            return
        states = self.agent_states(session)
        order = [agent.id for agent, _depth in session.tree.walk()]
        at = order.index(self.focused_agent) if self.focused_agent in order else -1
        for agent_id in order[at + 1:] + order[:at + 1]:
            if states[agent_id].needs_you and agent_id != self.focused_agent:
                await self.focus_agent(agent_id)
                return
        self.notify(NOBODY if not states.get(self.focused_agent or "", AgentState("idle")).needs_you
                    else "Nobody else needs you", timeout=3)

    def action_overview(self: AttentionHost) -> None:
        from ikigai_tui.tui.screens.overview import OverviewScreen

        session = self.session
        if session is None or isinstance(self.screen, ModalScreen):
            return

        async def chosen(agent_id: str | None) -> None:
            if agent_id is not None:
                await self.focus_agent(agent_id)

        self.push_screen(OverviewScreen(session, lambda: self.agent_states(session)), chosen)

    def on_agent_tree_view_dead_toggled(self: AttentionHost, message) -> None:
        self.attention_keeper.keep_hide_dead(message.hidden)

    # -- the desktop notification -----------------------------------------------------

    def _asked(self: AttentionHost, agent_id: str) -> None:
        """A tool's permission question of an agent no pane shows: the desktop hears of
        it too (its dialog is on the screen, which may be out of sight)."""
        session = self.session
        if session is None or agent_id not in session.tree:
            return
        if agent_id not in {pane.agent_id for pane in self.panes.all()}:
            self._notice_desktop(f"{sanitize(session.tree.label(agent_id))} asks permission")

    def _notice_desktop(self: AttentionHost, text: str) -> None:
        """Tell the desktop (the config's `notify`), where the terminal is known to show it."""
        from ikigai_tui.tui import desktop

        if self._desktop is False:
            self._desktop = desktop.protocol(self.config.notify, os.environ)
        driver = self._driver
        if not self._desktop or driver is None or getattr(self, "is_headless", True):
            return
        kind, tmux = self._desktop  # type: ignore[misc]
        driver.write(desktop.sequence(kind, text, tmux))
        driver.flush()
