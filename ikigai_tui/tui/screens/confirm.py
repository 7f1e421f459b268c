"""A yes/no question over another dialog, e.g. "Discard the edited summary?".

Dismisses with True for yes (y, or its button), False for no (n, Esc, or its button).
No is focused, so Enter on a question you did not expect to see loses nothing.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from ikigai_tui.tui.bindings import CONFIRM
from ikigai_tui.tui.keys import key_name
from ikigai_tui.tui.safe_text import plain
from ikigai_tui.tui.styles_path import stylesheet
from ikigai_tui.tui.widgets.keybar import KeyBar

__all__ = ["ConfirmScreen"]

STYLES = stylesheet("screens.tcss")


class ConfirmScreen(ModalScreen[bool]):
    """`question`, then a Yes button labelled `yes` and a No button labelled `no`."""

    CSS_PATH = STYLES
    AUTO_FOCUS = "#confirm-no"

    BINDINGS = CONFIRM  # keys named as pressed (keys.key_name), as on the buttons

    def __init__(self, question: str, *, yes: str = "Yes", no: str = "No") -> None:
        super().__init__()
        self._question = question
        self._yes = yes
        self._no = no

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(plain(self._question), id="confirm-question")
            with Horizontal(id="confirm-buttons"):
                yield Button(f"{self._yes} ({key_name('y')})", variant="error", id="confirm-yes", compact=True)
                yield Button(f"{self._no} ({key_name('n')})", variant="primary", id="confirm-no",
                             compact=True)
        yield KeyBar()

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)

    @on(Button.Pressed, "#confirm-yes")
    def _yes_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(True)

    @on(Button.Pressed, "#confirm-no")
    def _no_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(False)
