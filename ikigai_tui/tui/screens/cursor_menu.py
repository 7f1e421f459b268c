"""The cursor mode's action menu (Enter on an entry): the actions with their keys, those
that do not apply to the entry shown disabled; dismisses with the action chosen, or None."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from ikigai_tui.tui.bindings import CURSOR_MENU
from ikigai_tui.tui.styles_path import stylesheet
from ikigai_tui.tui.widgets.cursor import ACTIONS

WORDS = {"fork": "fork from here", "mark": "mark here", "forget": "forget it with its exchange",
         "pin": "pin its text", "copy": "copy it as Markdown", "view": "show it whole",
         "restore": "restore it to the context"}


class CursorMenu(ModalScreen[str | None]):
    CSS_PATH = stylesheet("screens.tcss")
    BINDINGS = CURSOR_MENU
    DEFAULT_CSS = """
    CursorMenu { align: center middle; }
    CursorMenu > Vertical { width: 46; height: auto; border: round $accent; }
    CursorMenu OptionList { border: none; }
    """

    def __init__(self, title: str, allowed: list[str]) -> None:
        super().__init__()
        self.title_text = title
        self.allowed = allowed

    def compose(self) -> ComposeResult:
        options = [Option(f"{key}  {WORDS[what]}", id=what, disabled=what not in self.allowed)
                   for what, key, _label in ACTIONS]
        with Vertical() as box:
            box.border_title = self.title_text
            yield OptionList(*options, id="cursor-menu")

    def on_key(self, event) -> None:
        for what, key, _label in ACTIONS:
            if event.key == key and what in self.allowed:
                event.stop()
                self.dismiss(what)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
