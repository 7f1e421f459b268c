"""The panes of the main area: one per shown agent, side by side in the split view.

A widget that owns its panes and which one is active; it tells the app which agent the
active pane shows (ActiveChanged) rather than writing the app's state. The session's
notices about what a pane shows (streamed pieces, committed events, notes) reach it as
messages, in the order they were told, and it hands each to the panes showing the agent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message

from ikigai_tui.core.tokens.limits import format_tokens
from ikigai_tui.tui.messages import AgentNote, EventsArrived, StreamArrived
from ikigai_tui.tui.notes import Notes
from ikigai_tui.tui.pages import AgentPages
from ikigai_tui.tui.transcript import Item, items_from_events
from ikigai_tui.tui.widgets.pane import AgentPane
from ikigai_tui.tui.widgets.styled_lines import FewKindsOfRows

if TYPE_CHECKING:
    from ikigai_tui.core.session import Session
    from ikigai_tui.core.tokens.window import Window

MAX_PANES = 4


class Panes(FewKindsOfRows, Horizontal):
    class ActiveChanged(Message):
        """The active pane now shows another agent."""

        def __init__(self, agent_id: str) -> None:
            super().__init__()
            self.agent_id = agent_id

    def __init__(self, *, id: str | None = "panes") -> None:
        super().__init__(id=id)
        self.session: Session | None = None
        self.panes: list[AgentPane] = []
        self.index = 0
        self.notes = Notes()
        self.zoom_note: str | None = None  # zoomed (tui/zoom.py): the active pane alone, this in its title

    @property
    def active(self) -> AgentPane | None:
        return self.panes[self.index] if self.panes else None

    def all(self) -> list[AgentPane]:
        return list(self.panes)

    def showing(self, agent_id: str) -> list[AgentPane]:
        return [p for p in self.panes if p.agent_id == agent_id]

    # -- what the session tells -------------------------------------------------

    def on_stream_arrived(self, message: StreamArrived) -> None:
        for pane in self.panes:
            if pane.agent_id == message.agent_id:
                pane.scrollback.stream(message.text, message.index)

    def on_events_arrived(self, message: EventsArrived) -> None:
        self.notes.seen(message.events)
        by_agent: dict[str, list] = {}
        for event in message.events:
            by_agent.setdefault(event.agent_id, []).append(event)
        for agent_id, mine in by_agent.items():
            panes = self.showing(agent_id)
            if not panes:
                continue
            items = items_from_events(mine)
            replied = any(e.kind == "assistant" for e in mine)
            for pane in panes:
                if replied:
                    pane.scrollback.end_stream()
                pane.scrollback.add_items(items)

    def on_agent_note(self, message: AgentNote) -> None:
        self.add_note(message.agent_id, message.kind, message.text)

    def add_note(self, agent_id: str, kind: str, text: str) -> None:
        """A line for the agent's panes that is not in the log; kept for the session, so
        it is still shown after switching to another agent and back."""
        item = Item(-1, kind, text)
        panes = self.showing(agent_id)
        self.notes.add(agent_id, item, panes[0].scrollback.items if panes else ())
        for pane in panes:
            pane.scrollback.add_items([item])

    # -- managing the panes ------------------------------------------------------

    def _new_pane(self, agent_id: str) -> AgentPane:
        assert self.session is not None
        return AgentPane(agent_id, self.notes.pages(agent_id, AgentPages(self.session, agent_id)))

    async def start(self, session: Session, agent_ids: list[str], active: int = 0) -> None:
        """The first panes (those left last time), each with its latest page read before
        the screen is composed."""
        self.session = session
        self.panes = []
        for agent_id in agent_ids:
            pane = self._new_pane(agent_id)
            pane.scrollback.preload(await pane.scrollback.latest_page())
            pane.set_title(self._title(agent_id))
            self.panes.append(pane)
        self.index = active
        self._mark_active()

    async def _load(self, pane: AgentPane) -> None:
        """A new pane's latest page, and the reply its agent is streaming (whole: the
        pieces told before the pane existed went to the panes there were)."""
        await pane.scrollback.load_latest()
        assert self.session is not None
        if (reply := self.session.tree[pane.agent_id].reply_so_far()) is not None:
            pane.scrollback.start_stream(*reply)

    def compose(self) -> ComposeResult:
        # Started before the screen is composed: the first frame already holds the page.
        yield from self.panes

    async def show(self, agent_id: str) -> None:
        """Show the agent in the active pane (or make the pane already showing it active)."""
        for i, pane in enumerate(self.panes):
            if pane.agent_id == agent_id:
                self._activate(i)
                return
        pane = self._new_pane(agent_id)
        if not self.panes:
            self.panes.append(pane)
            await self.mount(pane)
        else:
            old = self.panes[self.index]
            self.panes[self.index] = pane
            await self.mount(pane, after=old)
            await old.remove()
        self._activate(self.index)
        await self._load(pane)

    async def split(self) -> None:
        """Add a pane beside the others, for the next agent not shown yet; it becomes the
        active one (so F3 right after F2 closes it again)."""
        session = self.session
        if session is None or len(self.panes) >= MAX_PANES:
            self.notify(f"At most {MAX_PANES} panes.", severity="warning")
            return
        shown = {p.agent_id for p in self.panes}
        active = self.active
        children = [a.id for a in session.tree.children(active.agent_id)] if active else []
        order = children + [a.id for a, _ in session.tree.walk()]
        candidate = next((a for a in order if a not in shown), None)
        if candidate is None:
            self.notify("Every agent is already shown. Fork one with /fork.", severity="warning")
            return
        pane = self._new_pane(candidate)
        self.panes.append(pane)
        await self.mount(pane)
        self._activate(len(self.panes) - 1)
        await self._load(pane)

    async def close_active(self) -> None:
        if len(self.panes) <= 1:
            return
        pane = self.panes.pop(self.index)
        await pane.remove()
        self._activate(min(self.index, len(self.panes) - 1))

    async def cycle(self) -> None:
        if self.panes:
            self._activate((self.index + 1) % len(self.panes))

    def _activate(self, index: int) -> None:
        self.index = index
        self._mark_active()
        self.post_message(self.ActiveChanged(self.panes[index].agent_id))

    def zoom(self, note: str | None) -> None:
        """Show the active pane alone, `note` in its title (it follows the active pane);
        None: every pane again."""
        self.zoom_note = note
        self._mark_active()

    def _mark_active(self) -> None:
        zoomed = self.zoom_note is not None
        last = self.index if zoomed else len(self.panes) - 1
        for i, pane in enumerate(self.panes):
            pane.set_class(i == self.index and len(self.panes) > 1, "-active")
            pane.scrollback.background = i != self.index
            # (not :last-of-type, which is not looked at again when a pane closes)
            pane.set_class(i == last, "-last")
            pane.display = not zoomed or i == self.index
            pane.set_note(self.zoom_note if i == self.index else None)

    async def refresh_titles_and_rules(self, windows: Mapping[str, Window] | None = None) -> None:
        """Each pane's title and window rule; `windows`: those the caller just planned."""
        session = self.session
        if session is None:
            return
        tree = session.tree
        for pane in self.panes:
            agent = tree[pane.agent_id]
            window = (windows or {}).get(agent.id) or await session.measure(agent.id)
            if window.start is not None and window.start_index > 0:
                pane.scrollback.set_rule(window.start, rule_label(window))
            else:
                pane.scrollback.set_rule(None, "")
            pane.set_title(self._title(agent.id))

    def _title(self, agent_id: str) -> tuple[str, ...]:
        session = self.session
        assert session is not None
        agent = session.tree[agent_id]
        return (session.tree.label(agent_id), agent.status, session.model_of(agent))


def rule_label(window) -> str:
    """The window rule's words: the turns above it not sent, and, with summaries of pruned
    turns on, how many of their messages the summary sent stands for (/context shows it)."""
    turns = window.pruned_turns
    older = f"{turns:,} older turn{'s' if turns != 1 else ''}"
    if not window.pruned_summary:
        return f" window starts here · {older} not sent "
    n = window.pruned_covered
    return (f" window starts here · {n:,} earlier message{'s' if n != 1 else ''} summarised "
            f"({format_tokens(window.pruned_summary)} tokens, in /context) · {older} not "
            "sent verbatim ")
