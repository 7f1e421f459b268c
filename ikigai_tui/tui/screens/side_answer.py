"""The /btw panel: a side question and its answer, streamed as it arrives, over the pane.

A modal: the question on top, the answer below in a read-only TextArea (it wraps,
scrolls from the keyboard, and can be selected and copied; `c` copies it whole through
the terminal). Esc closes it; closed while the answer streams, the request stops and
nothing is written (tui/side.py cancels it). What it shows never enters any context
(core/handlers/btw.py): the title says so.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static, TextArea

from ikigai_tui.tui.bindings import SIDE_ANSWER
from ikigai_tui.tui.safe_text import plain, sanitize
from ikigai_tui.tui.widgets.keybar import KeyBar

__all__ = ["SideAnswerScreen"]

WAITING = "Asking the model…"


class SideAnswerScreen(ModalScreen[None]):
    """Shows a /btw question and its answer; dismisses with None."""

    DEFAULT_CSS = """
    SideAnswerScreen { align: center middle; }
    SideAnswerScreen > .dialog {
        width: 104; max-width: 96%; height: 80%;
        background: $surface; border: round $primary 60%;
        border-title-color: $text; border-title-style: bold; border-title-align: left;
        border-subtitle-color: $text-muted; border-subtitle-align: right;
        padding: 1 2;
    }
    SideAnswerScreen #side-question { color: $text-primary; margin-bottom: 1; }
    SideAnswerScreen #side-answer {
        height: 1fr; border: none; padding: 0; background: $surface;
        scrollbar-size-vertical: 1;
    }
    SideAnswerScreen #side-answer:focus { border: none; }
    SideAnswerScreen #side-status { color: $text-muted; height: 1; }
    SideAnswerScreen #side-status.-error { color: $text-error; }
    """

    AUTO_FOCUS = "#side-answer"
    BINDINGS = SIDE_ANSWER

    def __init__(self, question: str, model: str) -> None:
        super().__init__()
        self.question = question
        self.model = model
        self.answer = ""  # what arrived so far, as sent
        self.done = False

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog") as dialog:
            dialog.border_title = plain(f"Side question · {self.model} · in no context")
            dialog.border_subtitle = "Esc close · c copy"
            yield Static(plain(f"❯ {' '.join(self.question.split())}"), id="side-question")
            area = TextArea("", read_only=True, soft_wrap=True, show_line_numbers=False,
                            highlight_cursor_line=False, id="side-answer")
            area.cursor_blink = False
            yield area
            yield Static(WAITING, id="side-status")
        yield KeyBar()

    def on_mount(self) -> None:
        if self.answer:  # pieces that arrived before the panel was drawn
            self.query_one("#side-answer", TextArea).load_text(sanitize(self.answer))

    def add(self, text: str) -> None:
        """A piece of the answer as it arrives."""
        self.answer += text
        if self.is_mounted:
            area = self.query_one("#side-answer", TextArea)
            area.insert(sanitize(text), area.document.end)
            self.query_one("#side-status", Static).update("Answering…")

    def finish(self, answer: str | None, error: str | None = None) -> None:
        """The whole answer (it replaces the pieces), or the one line of a failure."""
        self.done = True
        if not self.is_mounted:
            return
        status = self.query_one("#side-status", Static)
        if error is not None:
            status.update(plain(error))
            status.add_class("-error")
            return
        if answer is not None:
            self.answer = answer
            area = self.query_one("#side-answer", TextArea)
            if area.text != sanitize(answer):
                area.load_text(sanitize(answer))
        status.update("Kept in the log as a side exchange; never sent in a request.")

    @property
    def text(self) -> str:
        """What the panel shows now."""
        return self.query_one("#side-answer", TextArea).text

    def action_copy(self) -> None:
        if not self.answer:
            self.notify("Nothing to copy yet.", severity="warning")
            return
        self.app.copy_to_clipboard(self.answer)
        self.notify(f"Copied the side answer: {len(self.answer):,} characters.")

    def action_close(self) -> None:
        self.dismiss(None)
