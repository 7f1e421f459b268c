"""One message of a preview in full, over the preview: read it, then Esc back to the list.

The text comes from the caller's `load_text(id)` (the preview's items carry only a first
line); without one, the item's own text is shown. It is sanitized (control characters
shown inert) and shown in a read-only TextArea: it wraps, scrolls from the keyboard,
and can be selected and copied. Very long messages are cut at `SHOWN_MAX` characters,
and the view says so.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static, TextArea

from ikigai_tui.tui.bindings import MESSAGE_VIEW
from ikigai_tui.tui.keymap import key_names
from ikigai_tui.tui.safe_text import plain, sanitize
from ikigai_tui.tui.screens.preview_rows import PreviewItem
from ikigai_tui.tui.styles_path import stylesheet
from ikigai_tui.tui.widgets.keybar import KeyBar

__all__ = ["LoadText", "MessageScreen"]

STYLES = stylesheet("screens.tcss")
SHOWN_MAX = 1_000_000  # characters; a TextArea takes ~0.7 s to lay out a million

LoadText = Callable[[int], Awaitable[str]]


class MessageScreen(ModalScreen[None]):
    """Shows one message's whole text; dismisses with None."""

    CSS_PATH = STYLES
    AUTO_FOCUS = "#message-text"

    BINDINGS = MESSAGE_VIEW

    def __init__(self, item: PreviewItem, load_text: LoadText | None = None) -> None:
        super().__init__()
        self.item = item
        self._load_text = load_text
        self.loaded = False  # the text is shown (or the error that kept it from it)

    def compose(self) -> ComposeResult:
        item = self.item
        if self._load_text is None:
            shown, notice = self._cut(item.first_line)
            self.loaded = True
        else:
            shown, notice = "Loading…", None
        with Vertical(classes="dialog") as dialog:
            dialog.border_title = plain(f"#{item.id} · {item.role} · {item.tokens:,} tokens")
            # The close key as the footer names it (keymap.key_name), in the keymap in force.
            close = key_names(self.BINDINGS, getattr(self.app, "keymap", None) or {})["view-close"]
            dialog.border_subtitle = f"{close} back to the list"
            if item.reason:
                yield Static(plain(f"matched: {' '.join(item.reason.split())}"), id="message-reason")
            area = TextArea(shown, read_only=True, soft_wrap=True, show_line_numbers=False,
                            highlight_cursor_line=False, id="message-text")
            area.cursor_blink = False  # a viewer: a steady cursor, for selecting
            yield area
            yield Static(Text(notice or ""), id="message-notice", classes="-visible" if notice else "")
        yield KeyBar()

    def on_mount(self) -> None:
        if self._load_text is not None:
            self.run_worker(self._load(self._load_text), exclusive=True, group="message-view")

    async def _load(self, load_text: LoadText) -> None:
        try:
            text = await load_text(self.item.id)
        except Exception as exc:  # noqa: BLE001 - any failure is shown, never raised into the app
            self._show("", error=f"Error: could not load message #{self.item.id}: {exc}")
            return
        self._show(text)

    @staticmethod
    def _cut(text: str) -> tuple[str, str | None]:
        """The text to show, sanitized and cut at SHOWN_MAX, and the notice that says so."""
        if len(text) <= SHOWN_MAX:
            return sanitize(text), None
        return (sanitize(text[:SHOWN_MAX]),
                f"Showing the first {SHOWN_MAX:,} of {len(text):,} characters.")

    def _show(self, text: str, *, error: str | None = None) -> None:
        if not self.is_mounted:
            return
        text, notice = self._cut(text)
        notice = error or notice
        area = self.query_one("#message-text", TextArea)
        area.load_text(text)
        area.move_cursor((0, 0))
        shown = self.query_one("#message-notice", Static)
        shown.update(Text(notice or ""))
        shown.set_class(bool(notice), "-visible")
        self.loaded = True

    @property
    def text(self) -> str:
        """What the view shows now."""
        return self.query_one("#message-text", TextArea).text

    def action_close(self) -> None:
        self.dismiss(None)
