"""The preview of a /forget or /remember: tick the messages, see the totals, apply or cancel."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, SelectionList, Static
from textual.widgets.selection_list import Selection

from ikigai_tui.tui.safe_text import plain, sanitize
from ikigai_tui.tui.widgets.keybar import KeyBar

__all__ = ["PreviewItem", "PreviewScreen"]

STYLES = Path(__file__).parents[2] / "styles" / "screens.tcss"

MODES = ("remove", "keep")
ROLE_WIDTH = 12
SHORT_SCREEN = 24  # rows; below this the dialog drops its padding and the mode line
FIRST_LINE_MAX = 400  # characters kept of a first line; the list cuts it to fit with "…"

MODE_LINES = {
    "remove": "Checked messages leave the context. The log keeps them; /undo brings them back.",
    "keep": "Only checked messages stay in the context; the others leave it. /undo brings them back.",
}


@dataclass(frozen=True)
class PreviewItem:
    """One message offered in the preview."""

    id: int
    role: str
    first_line: str
    tokens: int
    checked: bool = True


def first_line_of(text: str) -> str:
    """The first non-blank line of `text`, sanitized, tabs as spaces, capped in length."""
    for line in text.splitlines():
        if line.strip():
            return sanitize(line.strip().expandtabs(4))[:FIRST_LINE_MAX]
    return ""


class _ItemList(SelectionList[int]):
    """The list of items; Enter applies the preview instead of toggling."""

    BINDINGS = [Binding("enter", "screen.apply", "Apply", show=False)]


class PreviewScreen(ModalScreen[list[int] | None]):
    """Dismisses with the sorted ids of the checked items, or None when cancelled."""

    CSS_PATH = STYLES
    AUTO_FOCUS = "#preview-items"

    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("enter", "apply", "Apply", show=False),
        Binding("ctrl+s", "apply", "Apply"),
        Binding("a", "select_all", "Select all"),
        Binding("n", "select_none", "Select none"),
    ]

    def __init__(
        self,
        title: str,
        items: list[PreviewItem],
        tokens_before: int,
        *,
        mode: str = "remove",
        note: str | None = None,
        apply_label: str = "Apply",
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
        ids = [item.id for item in items]
        if len(set(ids)) != len(ids):
            raise ValueError("preview item ids must be unique")
        super().__init__()
        self._title = title
        self._items = list(items)
        self._tokens_before = tokens_before
        self._mode = mode
        self._note = note
        self._apply_label = apply_label
        self._checked: set[int] = {item.id for item in items if item.checked}

    # ---- layout ----

    def compose(self) -> ComposeResult:
        id_w = max([len(f"#{item.id}") for item in self._items] + [3])
        role_w = min(ROLE_WIDTH, max([len(sanitize(item.role)) for item in self._items] + [4]))
        tok_w = max([len(f"{item.tokens:,}") for item in self._items] + [6])
        with Vertical(classes="dialog") as dialog:
            dialog.border_title = plain(self._title)
            count = len(self._items)
            dialog.border_subtitle = f"{count} message{'' if count == 1 else 's'}"
            with Vertical(id="preview-intro"):
                if self._note:
                    yield Static(plain(self._note), id="preview-note")
                yield Static(Text(MODE_LINES[self._mode]), id="preview-mode")
            header = f"{'id'.ljust(id_w)}  {'role'.ljust(role_w)}  {'tokens'.rjust(tok_w)}  first line"
            yield Static(Text(header), id="preview-header")
            yield _ItemList(
                *(
                    Selection(self._row(item, id_w, role_w, tok_w), item.id, item.checked)
                    for item in self._items
                ),
                id="preview-items",
            )
            yield Static(self._totals_text(), id="preview-totals")
            yield Static("", id="preview-notice")
            with Horizontal(id="preview-buttons"):
                yield Static(
                    Text("space toggle · a all · n none · ⏎ apply · esc cancel"),
                    classes="hint",
                )
                yield Button(plain(self._apply_label), variant="primary", id="preview-apply", compact=True)
                yield Button("Cancel", id="preview-cancel", compact=True)
        yield KeyBar()  # this screen's keys, over the main screen's

    @staticmethod
    def _row(item: PreviewItem, id_w: int, role_w: int, tok_w: int) -> Text:
        role = sanitize(item.role)
        if len(role) > role_w:
            role = role[: role_w - 1] + "…"
        row = Text(no_wrap=True, overflow="ellipsis", end="")
        ident = f"#{item.id}"
        row.append(ident, style="dim")
        row.append(" " * (id_w - len(ident) + 2))
        row.append(role.ljust(role_w))
        row.append("  ")
        row.append(f"{item.tokens:,}".rjust(tok_w))
        row.append("  ")
        line = first_line_of(item.first_line)
        if line:
            row.append(line)
        else:
            row.append("(empty)", style="dim")
        return row

    # ---- fitting the list to the screen ----

    def on_mount(self) -> None:
        self.call_after_refresh(self._fit_list)

    def on_resize(self) -> None:
        self.call_after_refresh(self._fit_list)

    def _fit_list(self) -> None:
        """Let the list grow with its items but leave room for the rest of the dialog."""
        dialog = self.query_one(".dialog")
        items = self.query_one(_ItemList)
        self.set_class(self.size.height < SHORT_SCREEN, "-short")
        limit = dialog.styles.max_height
        height = self.size.height
        if limit is not None:
            height = int(limit.resolve(self.size, self.size, None))
        chrome = dialog.virtual_size.height + dialog.styles.gutter.height - items.outer_size.height
        room = max(3, height - chrome)
        if items.styles.max_height is None or items.styles.max_height.value != room:
            items.styles.max_height = room

    # ---- state ----

    @property
    def checked_ids(self) -> list[int]:
        """The ids ticked now, sorted."""
        return sorted(self._checked)

    def _removed(self) -> list[PreviewItem]:
        if self._mode == "remove":
            return [item for item in self._items if item.id in self._checked]
        return [item for item in self._items if item.id not in self._checked]

    def _totals_text(self) -> Text:
        removed = sum(item.tokens for item in self._removed())
        after = max(0, self._tokens_before - removed)
        return Text(
            f"{len(self._checked)} of {len(self._items)} selected"
            f" · removes {removed:,} tokens"
            f" · context: {self._tokens_before:,} → {after:,} tokens",
            no_wrap=True,
            overflow="ellipsis",
        )

    def _refresh_totals(self) -> None:
        self.query_one("#preview-totals", Static).update(self._totals_text())

    def _show_notice(self, message: str | None) -> None:
        notice = self.query_one("#preview-notice", Static)
        notice.update(Text(message or ""))
        if notice.has_class("-visible") != bool(message):
            notice.set_class(bool(message), "-visible")
            self.call_after_refresh(self._fit_list)

    @on(SelectionList.SelectedChanged, "#preview-items")
    def _selection_changed(self, event: SelectionList.SelectedChanged) -> None:
        event.stop()
        self._checked = set(event.selection_list.selected)
        self._show_notice(None)
        self._refresh_totals()

    # ---- actions ----

    def action_select_all(self) -> None:
        self.query_one(_ItemList).select_all()

    def action_select_none(self) -> None:
        self.query_one(_ItemList).deselect_all()

    def action_apply(self) -> None:
        # Read the list itself: a toggle's SelectedChanged may still be in flight.
        self._checked = set(self.query_one(_ItemList).selected)
        self._refresh_totals()
        if not self._removed():
            if self._mode == "remove":
                self._show_notice("Nothing would be removed: check at least one message, or press esc.")
            else:
                self._show_notice("Nothing would be removed: every message is checked to stay. Press esc to cancel.")
            return
        self.dismiss(self.checked_ids)

    def action_cancel(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed, "#preview-apply")
    def _apply_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_apply()

    @on(Button.Pressed, "#preview-cancel")
    def _cancel_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_cancel()
