"""`memory_writes = "ask"`: each change the LLM's memory tool proposes, shown as a diff
for the user to accept (y, Enter) or refuse (n, Esc) before anything is written.

The core hands the proposal to the reviewer installed here (`install_reviewer`) from
inside the agent's turn; the turn waits for the answer. Refusing tells the LLM so, in
its tool result; accepting writes the file and records the change (undoable).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ikigai_tui.core.memory.proposal import MemoryProposal
from ikigai_tui.core.memory.service import memory_of
from ikigai_tui.core.proposals import ACCEPT_ALL, REFUSE, Proposal, Verdict
from ikigai_tui.tui.bindings import MEMORY_DIFF
from ikigai_tui.tui.safe_text import sanitize
from ikigai_tui.tui.styles_path import stylesheet
from ikigai_tui.tui.widgets.keybar import KeyBar

if TYPE_CHECKING:
    from textual.app import App

    from ikigai_tui.core.session import Session

__all__ = ["MemoryDiffScreen", "diff_text", "install_reviewer"]

STYLES = stylesheet("memory.tcss")


def diff_text(lines: list[str]) -> Text:
    """A unified diff, sanitized, additions and removals coloured."""
    out = Text()
    for n, line in enumerate(lines):
        style = ""
        if line.startswith(("+++", "---")):
            style = "bold"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        elif line.startswith("@@"):
            style = "cyan"
        out.append(sanitize(line), style=style)
        if n < len(lines) - 1:
            out.append("\n")
    return out


class MemoryDiffScreen(ModalScreen[bool]):
    """One proposed memory change; dismisses with True (accept) or False (refuse)."""

    CSS_PATH = STYLES
    AUTO_FOCUS = "#memory-diff"
    BINDINGS = MEMORY_DIFF

    def __init__(self, proposal: MemoryProposal, agent: str = "") -> None:
        super().__init__()
        self.proposal = proposal
        self.agent = agent

    def compose(self) -> ComposeResult:
        change = self.proposal.change
        who = f"{self.agent}'s LLM" if self.agent else "The LLM"
        with Vertical(classes="dialog") as dialog:
            dialog.border_title = "Memory: a proposed change"
            dialog.border_subtitle = "y/enter: accept · n/esc: refuse"
            yield Static(Text(sanitize(f"{who} wants to {change.summary()}.")), id="memory-what")
            with VerticalScroll(id="memory-diff"):
                yield Static(diff_text(change.diff()), id="memory-diff-text")
            yield Static("Nothing is written until you accept; /undo reverses it afterwards.",
                         classes="hint")
        yield KeyBar()

    def action_accept(self) -> None:
        self.dismiss(True)

    def action_refuse(self) -> None:
        self.dismiss(False)


def install_reviewer(app: App, session: Session) -> None:
    """Answer the session's proposed memory writes with the diff dialog (used when
    memory_writes = "ask"; harmless otherwise)."""

    async def review(proposal: Proposal) -> Verdict:
        if not isinstance(proposal, MemoryProposal):
            return REFUSE
        answered: asyncio.Future[bool] = asyncio.get_running_loop().create_future()

        def done(result: bool | None) -> None:
            if not answered.done():
                answered.set_result(bool(result))

        screen = MemoryDiffScreen(proposal)
        app.push_screen(screen, done)
        try:
            return ACCEPT_ALL if await answered else REFUSE
        except asyncio.CancelledError:  # the turn was stopped: the question goes with it
            if app.screen is screen:
                screen.dismiss(False)
            raise

    memory_of(session).reviewer = review
