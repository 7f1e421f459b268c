"""The preview of a /forget, /remember or a restore (/recall): tick the messages, see the totals, apply or cancel.

The items (matches, with the matcher's reasons, grouped by exchange) live in one
line-based `PreviewList` (preview_list.py), so thousands of them open and react fast;
`v` opens one message in full (message_view.py) and Esc comes back to the same place.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.geometry import Size
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from ikigai_tui.core.matching import POSSIBLE_REASON
from ikigai_tui.tui.bindings import PREVIEW
from ikigai_tui.tui.keymap import key_names
from ikigai_tui.tui.safe_text import plain
from ikigai_tui.tui.screens.message_view import LoadText, MessageScreen
from ikigai_tui.tui.screens.preview_list import PreviewList
from ikigai_tui.tui.screens.preview_rows import PreviewItem, first_line_of, plural
from ikigai_tui.tui.styles_path import stylesheet
from ikigai_tui.tui.widgets.fitted import FittedParts
from ikigai_tui.tui.widgets.keybar import KeyBar

__all__ = ["PreviewItem", "PreviewList", "PreviewScreen", "first_line_of"]

STYLES = stylesheet("screens.tcss")

MODES = ("remove", "keep", "restore")
SHORT_SCREEN = 30  # rows; below this the dialog drops its padding and the mode line
KEYBAR_ROWS = 1  # the key bar docked at the bottom
MIN_ROWS = 10  # fewer free rows than this above the input: the dialog takes the screen's
# The keys under the list, by binding id, each named as pressed (keymap.key_name) in the
# keymap in force, as the footer names them; at a narrow width whole parts go, the view
# key first, then none, then all (the footer has them): toggle, apply and cancel stay.
HINT_PARTS = (("preview-toggle", "toggle"), ("preview-all", "all"), ("preview-none", "none"),
              ("preview-view", "view"), ("preview-apply", "{apply}"), ("preview-cancel", "cancel"))
HINT_DROP = (3, 2, 1)


def hint_parts(keymap: dict[str, str], apply_label: str = "Apply") -> list[str]:
    """`Space toggle · A all · N none · V view · Enter apply · Esc cancel`, in `keymap`."""
    # Enter's binding last: of the two "preview-apply" keys, the hint names Enter.
    names = key_names([*PreviewList.BINDINGS, *reversed(PreviewScreen.BINDINGS)], keymap)
    return [f"{names[binding]} {word.format(apply=apply_label.lower())}"
            for binding, word in HINT_PARTS]


# The totals' second line when the items are grouped by exchange: how to tick one whole,
# or the warning below. Always there, so that the dialog's layout does not change (and
# the list repaint whole) when the first exchange is split or the last one mended.
EXCHANGE_HINT = "Space on an exchange's header ticks (or unticks) all of it."

# The totals' second line when exchanges are split (a question without its answer, or
# the reverse): what happens to each part, by mode. Short: it must fit at 80 columns.
SPLIT_PARTS = {
    "remove": "part goes, part stays",
    "keep": "part stays, part goes",
    "restore": "part comes back, part stays out",
}

MODE_LINES = {
    "remove": "Checked messages leave the context. The log keeps them; /undo brings them back.",
    "keep": "Only checked messages stay in the context; the others leave it. /undo brings them back.",
    "restore": "Checked messages come back into the context at their place. /undo takes them out again.",
}


class PreviewScreen(ModalScreen[list[int] | None]):
    """Dismisses with the sorted ids of the checked items, or None when cancelled.

    mode "remove" (/forget): the checked items leave the context; mode "restore"
    (/recall, /restore): they come back into it. Mode "keep"
    (/remember): only the checked items stay; the unchecked ones leave, and so do the
    `unlisted` (messages, tokens) of the context that the preview does not show.
    `matcher` names what found the items, `criteria` what was asked; `load_text(id)`
    gives a message's whole text for the `v` view. `resize(change)`: the context's
    tokens once messages of `change` raw tokens come in (negative: leave), as measured
    after applying (core/tokens.Resize.after); without it, the items' tokens are added.
    """

    CSS_PATH = STYLES
    AUTO_FOCUS = "#preview-items"

    BINDINGS = PREVIEW

    def __init__(
        self,
        title: str,
        items: list[PreviewItem],
        tokens_before: int,
        *,
        mode: str = "remove",
        note: str | None = None,
        apply_label: str = "Apply",
        matcher: str | None = None,
        criteria: str | None = None,
        load_text: LoadText | None = None,
        unlisted: tuple[int, int] = (0, 0),
        resize: Callable[[float], int] | None = None,
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
        self._matcher = matcher
        self._criteria = criteria
        self._load_text = load_text
        self._unlisted = unlisted
        self._resize = resize
        self._list = PreviewList(self._items, id="preview-items")
        if apply_label != "Apply":  # the footer names Ctrl+S as the button does ("Restore")
            for key, bindings in self._bindings.key_to_bindings.items():
                self._bindings.key_to_bindings[key] = [
                    replace(b, description=apply_label) if b.action == "apply" else b
                    for b in bindings]

    # ---- layout ----

    def compose(self) -> ComposeResult:
        items = self._list
        with Vertical(id="preview-area"), Vertical(classes="dialog") as dialog:
            title = self._title
            if self._criteria:
                title += f' · "{" ".join(self._criteria.split())}"'
            dialog.border_title = plain(title)
            count = plural(len(self._items), "message")
            if items.grouped:
                count += f" in {plural(items.group_count, 'exchange')}"
            dialog.border_subtitle = count
            with Vertical(id="preview-intro"):
                if self._note:
                    yield Static(plain(self._note), id="preview-note")
                if self._matcher:
                    yield Static(plain(f"matched by: {self._matcher}{self._sureness()}"),
                                 id="preview-matcher")
                yield Static(Text(MODE_LINES[self._mode]), id="preview-mode")
            yield Static(Text(items.header_text(), no_wrap=True, overflow="ellipsis"),
                         id="preview-header")
            yield items
            yield Static(self._totals_text(), id="preview-totals")
            yield Static("", id="preview-notice")
            with Horizontal(id="preview-buttons"):
                hint = FittedParts(classes="hint")
                hint.show(hint_parts(getattr(self.app, "keymap", None) or {}, self._apply_label),
                          HINT_DROP)
                yield hint
                yield Button(plain(self._apply_label), variant="primary", id="preview-apply", compact=True)
                yield Button("Cancel", id="preview-cancel", compact=True)
        yield KeyBar()  # this screen's keys, over the main screen's

    def _sureness(self) -> str:
        """How sure the matcher is, when it offered some messages as only possible (their
        reason says so; listed unticked): how many it gave a reason for are likely."""
        reasoned = [item for item in self._items if item.reason]
        possible = sum(item.reason.startswith(POSSIBLE_REASON) for item in reasoned)
        if not possible:
            return ""
        return f" · {len(reasoned) - possible} likely, {possible} possible (unticked)"

    # ---- fitting the list to the screen ----

    def on_mount(self) -> None:
        self._place()
        self.call_after_refresh(self._fit_list)

    def on_resize(self) -> None:
        self._place()
        self.call_after_refresh(self._fit_list)

    def _free_rows(self) -> tuple[int, int]:
        """The rows the dialog may take, [top, bottom): those of the conversation panes of
        the screen below (the status line, the gauge, the input and the key bar stay in
        view, their borders whole); without panes, 90% of the screen, centred."""
        height = self.size.height - KEYBAR_ROWS
        panes = getattr(self.app, "panes", None)
        region = panes.region if panes is not None and panes.is_mounted else None
        if region and region.height >= MIN_ROWS and region.bottom <= height:
            return region.y, region.bottom
        rows = max(1, min(height, height * 9 // 10))
        top = (height - rows) // 2
        return top, top + rows

    def _place(self) -> bool:
        """The area the dialog is centred in: the free rows, from the start. False when
        the dialog is gone: a dismissal removes the widgets before the screen, and a
        fitting or a resize put off till after a refresh may run in between."""
        areas = self.query("#preview-area")
        if not areas:
            return False
        self.set_class(self.size.height < SHORT_SCREEN, "-short")
        top, bottom = self._free_rows()
        area = areas.first().styles
        area.margin = (top, 0, 0, 0)
        area.height = bottom - top
        return True

    def _fit_list(self) -> None:
        """Let the list grow with its items up to what the rest of the dialog leaves of
        the free rows. The dialog's other parts keep their height whatever is ticked (the
        totals' second line is always there), so this is its size from the start."""
        if not self.is_mounted or not self._place():
            return
        self._hold_totals_height(self.query_one("#preview-totals", Static))
        dialog = self.query_one(".dialog")
        items = self._list
        top, bottom = self._free_rows()
        chrome = dialog.styles.gutter.height + sum(
            child.outer_size.height for child in dialog.children
            if child is not items and child.display)
        room = max(3, bottom - top - chrome)
        if items.styles.max_height is None or items.styles.max_height.value != room:
            items.styles.max_height = room
            self.call_after_refresh(items.scroll_to_cursor)

    # ---- state ----

    @property
    def checked_ids(self) -> list[int]:
        """The ids ticked now, sorted."""
        return self._list.checked_ids

    @property
    def preview_list(self) -> PreviewList:
        return self._list

    def leaving(self) -> tuple[int, int]:
        """(messages, tokens) that would leave the context with the ticks as they are
        (restore: that would come back); the tokens are the change of the context's size."""
        items = self._list
        if self._mode in ("remove", "restore"):  # restore: what comes back
            messages, tokens = items.checked_count, items.checked_tokens
        else:
            messages = len(self._items) - items.checked_count + self._unlisted[0]
            tokens = items.total_tokens - items.checked_tokens + self._unlisted[1]
        if self._resize is None:
            return messages, tokens
        return messages, abs(self.tokens_after() - self._tokens_before)

    def tokens_after(self) -> int:
        """The context's tokens once applied, with the ticks as they are."""
        items = self._list
        if self._resize is None:
            messages, tokens = self.leaving()
            return (self._tokens_before + tokens if self._mode == "restore"
                    else max(0, self._tokens_before - tokens))
        if self._mode == "restore":
            return self._resize(items.raw_of(items.checked_ids))
        if self._mode == "remove":
            return self._resize(-items.raw_of(items.checked_ids))
        checked = set(items.checked_ids)
        unticked = [i.id for i in self._items if i.id not in checked]
        return self._resize(-items.raw_of(unticked) - self._unlisted[1])

    def _totals_text(self, widest: bool = False) -> Text:
        text = self._totals_line(widest)
        split = self._list.split_count
        if split:
            text.append(f"\n⚠ {plural(split, 'exchange')} split: {SPLIT_PARTS[self._mode]}",
                        style="bold")
        elif self._list.grouped:
            text.append(f"\n{EXCHANGE_HINT}")
        return text

    def _totals_line(self, widest: bool = False) -> Text:
        """The totals as ticked; `widest`: with every figure padded to the widest it can
        be (what the totals' height is measured on, so that ticking never changes it)."""
        items = self._list
        messages, tokens = self.leaving()
        most = self._tokens_before + items.total_tokens + self._unlisted[1]

        def figure(n: int, top: int) -> str:
            return _pad(n, top) if widest else f"{n:,}"

        count = figure(items.checked_count, len(self._items))
        total = f"{len(self._items):,}"
        before = figure(self._tokens_before, most)
        after = figure(self.tokens_after(), most)
        if self._mode == "restore":
            return Text(f"{count} of {total} selected · brings back {figure(tokens, most)} "
                        f"tokens · context: {before} → {after} tokens")
        context = f"context: {before} → {after} tokens"
        if self._mode == "remove":
            text = (f"{count} of {total} selected · removes {figure(tokens, most)} tokens"
                    f" · {context}")
        else:
            text = (f"{count} of {total} selected to stay · "
                    f"{figure(messages, len(self._items) + self._unlisted[0])} "
                    f"message{'s' if messages != 1 or widest else ''} ({figure(tokens, most)} tokens) "
                    f"leave · {context}")
        return Text(text)

    def _refresh_totals(self) -> None:
        totals = self.query_one("#preview-totals", Static)
        before = totals.size.height
        totals.update(self._totals_text())
        self._hold_totals_height(totals)
        if before:
            self.call_after_refresh(self._fit_list)  # a narrow dialog may wrap it anew

    def _hold_totals_height(self, totals: Static) -> None:
        """The totals' height: what they take with every figure at its widest, whatever is
        ticked now (a narrower figure must not let the dialog shrink, nor a wider one grow
        it)."""
        width = totals.content_size.width
        if width > 0:
            rows = len(self._totals_text(widest=True).wrap(self.app.console, width))
            if totals.styles.min_height is None or totals.styles.min_height.value != rows:
                totals.styles.min_height = rows

    def _show_notice(self, message: str | None) -> None:
        notice = self.query_one("#preview-notice", Static)
        notice.update(Text(message or ""))
        if notice.has_class("-visible") != bool(message):
            notice.set_class(bool(message), "-visible")
            self.call_after_refresh(self._fit_list)

    @on(PreviewList.Changed, "#preview-items")
    def _ticks_changed(self, event: PreviewList.Changed) -> None:
        event.stop()
        self._show_notice(None)
        self._refresh_totals()

    # ---- actions ----

    def action_select_all(self) -> None:
        self._list.set_all(True)

    def action_select_none(self) -> None:
        self._list.set_all(False)

    def action_view(self) -> None:
        item = self._list.current
        if item is not None:
            self.app.push_screen(MessageScreen(item, self._load_text))

    def action_apply(self) -> None:
        self._refresh_totals()
        if not self.leaving()[0]:
            if self._mode == "restore":
                self._show_notice("Nothing would come back: check at least one message, or press esc.")
            elif self._mode == "remove":
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


def _pad(n: int, top: int) -> str:
    """`n` with thousands separators, padded on the left to the width `top` takes, with a
    digit (as wide, and no line breaks inside the figure)."""
    text, room = f"{n:,}", f"{top:,}"
    return "0" * (len(room) - len(text)) + text
