"""One agent's pane: a title line and its scrollback. The split view shows several."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical

from ikigai_tui.tui.widgets.fitted import FittedParts
from ikigai_tui.tui.widgets.scrollback import Page, Scrollback
from ikigai_tui.tui.widgets.styled_lines import FewKindsOfRows


class PaneTitle(FittedParts):
    """The agent, its status, its model: what fits the width, dropped from the end by
    whole parts (never a dangling " · " nor a word cut; fit.py)."""


class AgentPane(FewKindsOfRows, Vertical):
    DEFAULT_CSS = """
    AgentPane { width: 1fr; height: 1fr; }
    AgentPane > .pane-title { height: 1; padding: 0 1; color: $text-muted; background: $boost; }
    AgentPane.-active > .pane-title { color: $text; background: $primary 30%; text-style: bold; }
    """

    def __init__(self, agent_id: str, pages: Page) -> None:
        super().__init__()
        self.agent_id = agent_id
        self.scrollback = Scrollback(agent_id, pages)
        self.title = PaneTitle("", classes="pane-title")
        self._parts: tuple[str, ...] = ()
        self._note: str | None = None

    def compose(self) -> ComposeResult:
        yield self.title
        yield self.scrollback

    def set_title(self, parts: tuple[str, ...]) -> None:
        """The title's parts (agent, status, model), shortened to the width by PaneTitle."""
        self._parts = tuple(parts)
        self._show_title()

    def set_note(self, note: str | None) -> None:
        """A last part of the title ("zoomed"), kept over the status and the model."""
        self._note = note
        self._show_title()

    def _show_title(self) -> None:
        if self._note is None:
            self.title.show(self._parts)
        else:  # the model, then the status go first; the note before the agent's name
            drop = tuple(i for i in (2, 1) if i < len(self._parts))
            self.title.show((*self._parts, self._note), drop=drop)
