"""One agent's pane: a title line and its scrollback. The split view shows several."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from ikigai_tui.tui.widgets.scrollback import Page, Scrollback


class AgentPane(Vertical):
    DEFAULT_CSS = """
    AgentPane { width: 1fr; height: 1fr; }
    AgentPane > .pane-title { height: 1; padding: 0 1; color: $text-muted; background: $boost; }
    AgentPane.-active > .pane-title { color: $text; background: $primary 30%; text-style: bold; }
    """

    def __init__(self, agent_id: str, pages: Page) -> None:
        super().__init__()
        self.agent_id = agent_id
        self.scrollback = Scrollback(agent_id, pages)
        self.title = Static("", classes="pane-title")

    def compose(self) -> ComposeResult:
        yield self.title
        yield self.scrollback

    def set_title(self, text: str) -> None:
        self.title.update(Text(text))
