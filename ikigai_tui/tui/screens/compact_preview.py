"""The preview of a /compact: the summary (editable before accepting), the messages it
replaces and the token saving. Ctrl+S accepts (with the summary as edited), Esc cancels:
at once when the summary is as proposed, after a confirm when it was edited.

Dismisses with the summary text to write, or None when cancelled.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static, TextArea

from ikigai_tui.tui.bindings import COMPACT_PREVIEW
from ikigai_tui.tui.safe_text import plain, sanitize
from ikigai_tui.tui.screens.confirm import ConfirmScreen
from ikigai_tui.tui.screens.preview_rows import PreviewItem, plural
from ikigai_tui.tui.styles_path import stylesheet
from ikigai_tui.tui.widgets.keybar import KeyBar

__all__ = ["CompactPreviewScreen"]

STYLES = stylesheet("compact.tcss")
ROWS = 200  # replaced messages listed; the rest in one line
HINT = "edit the summary · Ctrl+S accept · Esc cancel"


class CompactPreviewScreen(ModalScreen[str | None]):
    """`saving(summary)` says what accepting that summary would do to the context."""

    CSS_PATH = STYLES
    AUTO_FOCUS = "#compact-summary"

    BINDINGS = COMPACT_PREVIEW

    def __init__(self, title: str, summary: str, items: Sequence[PreviewItem], *,
                 by: str, saving: Callable[[str], str]) -> None:
        super().__init__()
        self._title = title
        self._summary = summary
        self._items = list(items)
        self._by = by
        self._saving = saving

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog") as dialog:
            dialog.border_title = plain(self._title)
            dialog.border_subtitle = f"replaces {plural(len(self._items), 'message')}"
            yield Static(plain(self._by), id="compact-by")
            yield TextArea(self._summary, id="compact-summary", soft_wrap=True,
                           show_line_numbers=False)
            yield Static(plain(f"Replaced ({plural(len(self._items), 'message')}; /undo "
                               "brings them back):"), id="compact-replaced-title")
            with VerticalScroll(id="compact-replaced"):
                yield Static(self._replaced_text())
            yield Static(self._totals_text(), id="compact-totals")
            yield Static("", id="compact-notice")
            with Horizontal(id="compact-buttons"):
                yield Static(Text(HINT), classes="hint")
                yield Button("Accept", variant="primary", id="compact-accept", compact=True)
                yield Button("Cancel", id="compact-cancel", compact=True)
        yield KeyBar()

    def _replaced_text(self) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis")
        for n, item in enumerate(self._items[:ROWS]):
            if n:
                text.append("\n")
            text.append(f"#{item.id:<7} ", style="dim")
            text.append(f"{item.role:<11} {item.tokens:>7,}  ")
            text.append(sanitize(item.first_line[:120]))
        if len(self._items) > ROWS:
            text.append(f"\n… and {len(self._items) - ROWS:,} more")
        return text

    @property
    def summary(self) -> str:
        return self.query_one("#compact-summary", TextArea).text

    def _totals_text(self, summary: str | None = None) -> Text:
        return plain(self._saving(self._summary if summary is None else summary))

    @on(TextArea.Changed, "#compact-summary")
    def _edited(self, event: TextArea.Changed) -> None:
        event.stop()
        self.query_one("#compact-totals", Static).update(self._totals_text(self.summary))
        self._notice(None)

    def _notice(self, message: str | None) -> None:
        notice = self.query_one("#compact-notice", Static)
        notice.update(Text(message or ""))
        notice.set_class(bool(message), "-visible")

    def action_accept(self) -> None:
        if not self.summary.strip():
            self._notice("The summary is empty: write one, or press esc to cancel.")
            return
        self.dismiss(self.summary)

    def action_cancel(self) -> None:
        if self.summary == self._summary:
            self.dismiss(None)
            return

        def answered(discard: bool | None) -> None:
            if discard:
                self.dismiss(None)

        self.app.push_screen(ConfirmScreen("Discard the edited summary? Nothing is written.",
                                           yes="Discard", no="Keep editing"), answered)

    @on(Button.Pressed, "#compact-accept")
    def _accept_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_accept()

    @on(Button.Pressed, "#compact-cancel")
    def _cancel_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_cancel()
