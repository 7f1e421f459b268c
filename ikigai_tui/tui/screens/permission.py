"""A tool the user's rules `ask` about (core/tools/permissions.py): which agent asks, for
which tool, and exactly what will run (the tool's `describe()`, verbatim: the command
and its folder; for an edit, the diff of the file, coloured), before anything runs.

y: yes, this once; a: always for this agent (recorded in its log, inherited by its
forks, undone by /undo); n or Esc: no (the LLM reads that the user refused). The agent's
turn waits for the answer; several agents asking at once are asked one after another
(tui/submit.py's `SubmitController.ask_permission` queues them).
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ikigai_tui.core.tools.permissions import ALWAYS, ONCE, REFUSE, PermissionRequest
from ikigai_tui.tui.bindings import PERMISSION
from ikigai_tui.tui.safe_text import sanitize
from ikigai_tui.tui.screens.memory_diff import diff_text
from ikigai_tui.tui.styles_path import stylesheet
from ikigai_tui.tui.widgets.keybar import KeyBar

__all__ = ["PermissionScreen", "described"]

STYLES = stylesheet("screens.tcss")


def described(description: str) -> Text:
    """The description as shown: a unified diff coloured +/-, anything else as written
    (made safe: control characters are shown, never obeyed)."""
    lines = description.splitlines()
    if any(line.startswith("@@") for line in lines):
        return diff_text(lines)
    return Text(sanitize(description))


class PermissionScreen(ModalScreen[str]):
    """One request; dismisses with ONCE, ALWAYS or REFUSE."""

    CSS_PATH = STYLES
    AUTO_FOCUS = "#permission-what"
    BINDINGS = PERMISSION

    def __init__(self, request: PermissionRequest, waiting: int = 0) -> None:
        super().__init__()
        self.request = request
        self.waiting = waiting  # other requests queued behind this one

    def compose(self) -> ComposeResult:
        request = self.request
        with Vertical(classes="dialog") as dialog:
            dialog.border_title = sanitize(f"Permission: {request.tool}")
            dialog.border_subtitle = "y: yes, once · a: always for this agent · n/esc: no"
            yield Static(Text(sanitize(f"{request.agent} wants to run {request.tool} "
                                       f"({request.access or 'unknown access'}):")),
                         id="permission-who")
            with VerticalScroll(id="permission-what"):
                yield Static(described(request.description), id="permission-text")
            more = (f" {self.waiting} more request{'s' if self.waiting > 1 else ''} waiting."
                    if self.waiting else "")
            yield Static("Nothing runs until you answer; \"always\" is undone by /undo."
                         + more, classes="hint", id="permission-hint")
        yield KeyBar()

    def action_answer(self, choice: str) -> None:
        self.dismiss(choice if choice in (ONCE, ALWAYS) else REFUSE)
