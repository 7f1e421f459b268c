"""/history in the TUI: the agent's context changes (its output in the scrollback too), in a
list; Enter on a change not yet undone asks, then takes the context back to just before it
through `/undo --to ID` (tui/submit.py runs it), so what is written is exactly what that
command writes. Undone changes are listed, dimmed, and cannot be chosen."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ikigai_tui.core.commands.parse import CommandResult
from ikigai_tui.core.handlers.history import Change
from ikigai_tui.tui.bindings import HISTORY
from ikigai_tui.tui.safe_text import plain
from ikigai_tui.tui.screens.confirm import ConfirmScreen
from ikigai_tui.tui.styles_path import stylesheet
from ikigai_tui.tui.widgets.keybar import KeyBar

if TYPE_CHECKING:
    from ikigai_tui.core.session import Session

__all__ = ["HistoryScreen", "history_screen"]

STYLES = stylesheet("memory.tcss")


def _row(change: Change) -> Text:
    when = time.strftime("%m-%d %H:%M", time.localtime(change.created_at)) if change.created_at else "?"
    size = (f"{change.before:,} -> {change.after:,}" if change.before != change.after
            else f"{change.after:,}")
    row = Text(f"#{change.id:<7} {when}  {change.who:<11} ", style="dim")
    row.append_text(plain(" ".join(change.text.split())[:60]))
    row.append(f"  · {size} messages", style="dim")
    if change.undone_by is not None:
        row.append(f"  undone by #{change.undone_by}")
        row.stylize("dim strike", 0, len(row))
    return row


class HistoryScreen(ModalScreen[int | None]):
    """The changes, oldest first, the newest selected; dismisses with the id of the change
    to take the context back to (after a yes), or None."""

    CSS_PATH = STYLES
    AUTO_FOCUS = "#history-changes"
    BINDINGS = HISTORY

    def __init__(self, label: str, changes: list[Change]) -> None:
        super().__init__()
        self.label = label
        self.changes = {c.id: c for c in changes}

    def compose(self) -> ComposeResult:
        options = [Option(_row(c), id=str(c.id), disabled=c.undone_by is not None)
                   for c in self.changes.values()]
        with Vertical(classes="dialog") as dialog:
            dialog.border_title = plain(f"Context changes of {self.label}")
            dialog.border_subtitle = "enter: undo back to here · esc: close"
            yield Static("Enter on a change takes the context back to just before it (every "
                         "later change is undone too; messages that came after stay). /undo "
                         "reverses one change at a time.", id="memory-mode")
            yield OptionList(*options, id="history-changes")
        yield KeyBar()

    def on_mount(self) -> None:
        listed = self.query_one(OptionList)
        choosable = [i for i, c in enumerate(self.changes.values()) if c.undone_by is None]
        if choosable:
            listed.highlighted = choosable[-1]

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        change = self.changes.get(int(event.option.id or 0))
        if change is None or change.undone_by is not None:
            return
        later = sum(1 for c in self.changes.values() if c.id > change.id and c.undone_by is None)
        also = f" and {later} later change{'s' if later != 1 else ''}" if later else ""
        question = (f"Undo #{change.id} ({' '.join(change.text.split())[:60]}){also}? The "
                    "context goes back to just before it.")

        def answered(yes: bool | None) -> None:
            if yes:
                self.dismiss(change.id)

        self.app.push_screen(ConfirmScreen(question, yes="Undo", no="Keep"), answered)

    def action_close(self) -> None:
        self.dismiss(None)


def history_screen(session: Session, agent_id: str, outcome: object) -> HistoryScreen | None:
    """After /history: the list, when some change is left to undo back to."""
    changes = outcome.data if isinstance(outcome, CommandResult) else None
    if not changes or all(c.undone_by is not None for c in changes):
        return None
    return HistoryScreen(session.tree.label(agent_id), changes)
