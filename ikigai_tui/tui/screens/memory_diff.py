"""`memory_writes = "ask"`: each change the LLM's memory tool proposes, shown as a diff
for the user to accept (y, Enter) or refuse (n, Esc) before anything is written.

The core hands the proposal to the reviewer the TUI installs (tui/submit.py's
`SubmitController.ask`, which opens this dialog for the presentation kind "memory", see
screens/dialogs.py) from inside the agent's turn; the turn waits for the answer.
Refusing tells the LLM so, in its tool result; accepting writes the file and records
the change (undoable).
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ikigai_tui.core.memory.proposal import MemoryProposal
from ikigai_tui.tui.bindings import MEMORY_DIFF
from ikigai_tui.tui.safe_text import sanitize
from ikigai_tui.tui.styles_path import stylesheet
from ikigai_tui.tui.widgets.keybar import KeyBar

__all__ = ["MemoryDiffScreen", "diff_text"]

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

