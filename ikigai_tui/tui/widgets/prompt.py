"""The input: multi-line, with history and Tab completion.

Keys (handled in ``_on_key``, before the TextArea's own handling and before any
non-priority binding of the screen or app):

- ``enter`` submits (posts `PromptInput.Submitted`, records history, clears); blank text
  posts nothing.
- ``ctrl+j`` inserts a newline in every terminal. ``shift+enter``, ``alt+enter`` and
  ``ctrl+enter`` do too where the terminal reports them (kitty keyboard protocol:
  kitty, foot, WezTerm, Ghostty, recent iTerm2); a legacy terminal sends a plain Enter
  for them, which submits.
- ``up`` on the first line / ``down`` on the last line walk the history (the agent's,
  read back from the log: tui/history.py); the draft being typed is kept and comes back
  after the newest entry. In the empty input, ``up`` first takes back a message queued
  for the agent (the `recall` callable), if any.
- The keys of ``send`` and ``newline`` (binding ids) follow the user's keymap: with
  ``send = "ctrl+s"``, Enter adds a line as in any text area.
- ``tab`` completes the current word with the completer; when there is no word before
  the cursor, Tab keeps its usual meaning (focus the next widget).
- ``/`` in the empty input opens the command menu above it (widgets/command_menu.py):
  while it lists commands it takes up, down, Tab, Enter and Esc first.

Styles live in ``styles/widgets.tcss`` (class ``-blocked`` while sending is
blocked). Nothing typed or completed is ever parsed as markup.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.text import Text
from textual import events
from textual.message import Message
from textual.widgets import TextArea

from ikigai_tui.tui.fit import fit
from ikigai_tui.tui.bindings import INPUT
from ikigai_tui.tui.keys import key_name
from ikigai_tui.tui.safe_text import sanitize

if TYPE_CHECKING:
    from ikigai_tui.tui.widgets.command_menu import CommandMenu

__all__ = ["PromptInput"]

NEWLINE_KEYS = frozenset({"ctrl+j", "shift+enter", "alt+enter", "ctrl+enter"})
# Invisible characters that join or shape what is around them (emoji sequences like
# 👩‍💻, scripts that need them); Python does not call them printable, so a TextArea drops
# them when typed or pasted key by key.
JOINERS = frozenset({"\u200c", "\u200d", *map(chr, range(0xE0020, 0xE0080))})
# Their key names ("zero_width_joiner"), for a key event that names one but has lost
# its character (Textual's simulated keys do that).
_JOINER_KEYS = {unicodedata.name(c).lower().replace(" ", "_").replace("-", "_"): c
                for c in JOINERS}
HINT_LIMIT = 8
_LAST_WORD = re.compile(r"\S*\Z")


class PromptInput(TextArea):
    """The message/command input of the focused agent."""

    DEFAULT_CSS = """
    PromptInput {
        height: auto;
        min-height: 3;
        max-height: 12;
    }
    """

    # Shown in the footer; the keys themselves are handled in `_on_key`.
    BINDINGS = INPUT

    class Submitted(Message):
        """The user pressed Enter on non-blank text."""

        def __init__(self, prompt: PromptInput, text: str) -> None:
            self.prompt = prompt
            self.text = text
            super().__init__()

        @property
        def control(self) -> PromptInput:
            return self.prompt

    def __init__(
        self,
        *,
        completer: Callable[[str], list[str]] | None = None,
        recall: Callable[[], str | None] | None = None,
        id: str | None = None,
        menu: bool = False,
    ) -> None:
        super().__init__(
            "",
            id=id,
            soft_wrap=True,
            tab_behavior="focus",
            show_line_numbers=False,
            highlight_cursor_line=False,
        )
        self._completer = completer
        self._recall = recall
        self._history: list[str] = []
        self._history_index: int | None = None  # None: editing the draft
        self._draft = ""
        self._hint_for: str | None = None  # the text the completion hint belongs to
        self._blocked: str | None = None
        self._title_before_block: str | None = None
        self._send_keys: frozenset[str] = frozenset({"enter"})
        self._newline_keys: frozenset[str] = NEWLINE_KEYS
        self._key_names = ("Enter", "Ctrl+J")  # the send and new-line keys, as the placeholder says them
        self._keymap: dict[str, str] = {}
        self._with_menu = menu  # the / menu (the app's input has it)
        self.menu: CommandMenu | None = None  # the / menu, made when first opened
        self._fit_placeholder()

    # ---- public API -------------------------------------------------------------

    def set_blocked(self, message: str | None) -> None:
        """Show `message` as a warning in the border title; None lifts it."""
        if message is None:
            if self._blocked is not None:
                self._blocked = None
                self.remove_class("-blocked")
                self.border_title = self._title_before_block
                self._title_before_block = None
            return
        if self._blocked is None:
            self._title_before_block = self.border_title
        self._blocked = message
        self.border_title = Text(sanitize(message))
        self.add_class("-blocked")

    @property
    def blocked(self) -> str | None:
        """The blocking message, or None."""
        return self._blocked

    def set_history(self, items: list[str]) -> None:
        """Replace the history (oldest first); the draft is kept."""
        self._history = [item for item in items if item.strip()]
        self._history_index = None

    def use_history(self, items: list[str]) -> None:
        """Walk `items` (oldest first) from now on, and add what is sent to that list."""
        self._history = items
        self._history_index = None

    def use_keymap(self, keymap: dict[str, str]) -> None:
        """The send and new-line keys in force (`keymap`: binding id -> keys)."""
        self._keymap = keymap
        if "send" in keymap:
            self._send_keys = frozenset(keymap["send"].split(","))
        if "newline" in keymap:
            self._newline_keys = frozenset(keymap["newline"].split(","))
        self._key_names = tuple(key_name(keymap.get(binding.id or "", binding.key).split(",")[0])
                                for binding in self.BINDINGS)
        self._fit_placeholder()

    def _fit_placeholder(self) -> None:
        """The longest placeholder that fits the input's width: shortened, never cut."""
        send, newline = self._key_names
        self.placeholder = fit((f"Message, or / for commands ({send} sends, {newline} new line)",
                                f"Message, or / for commands ({send} sends)",
                                "Message, or / for commands", "Message"),
                               self.content_size.width or 1_000)

    def on_resize(self) -> None:
        self._fit_placeholder()
        # Toasts never reach down over the input (and the footer under it), so what is
        # typed stays in view; their top margin is the stylesheet's (under the panes'
        # titles), which a margin of 0 here once undid.
        for rack in self.screen.query("#textual-toastrack"):
            rack.styles.margin = (rack.styles.margin.top, 0, 1 + self.outer_size.height, 0)

    def put_text(self, text: str) -> None:
        """Replace the whole text (the editor's result), the cursor at its end."""
        self._history_index = None
        self._show(text, cursor_on_first_line=False)

    @property
    def input_history(self) -> list[str]:
        """A copy of the history, oldest first."""
        return list(self._history)

    # ---- actions ------------------------------------------------------------------

    def action_submit(self) -> None:
        text = self.text
        if not text.strip():
            return
        if not self._history or self._history[-1] != text:
            self._history.append(text)
        self._history_index = None
        self._draft = ""
        self._clear_hint()
        if self.menu is not None:
            self.menu.close()
        self.clear()
        self.post_message(self.Submitted(self, text))

    def action_newline(self) -> None:
        if self.read_only:
            return
        start, end = self.selection
        self.replace("\n", start, end, maintain_selection_offset=False)

    # ---- keys -----------------------------------------------------------------------

    def check_consume_key(self, key: str, character: str | None = None) -> bool:
        # Keeps ancestors' bindings (even priority ones) for these keys from firing
        # or showing in the footer while the input has focus.
        if not self.read_only and (key in self._send_keys or key in self._newline_keys):
            return True
        return super().check_consume_key(key, character)

    async def _on_key(self, event: events.Key) -> None:
        key = event.key
        handled = False
        menu = self.menu
        if menu is not None and menu.active and (text := menu.key(key, self.text)) is not None:
            if text:  # a completed name: the menu follows it (the usage hint, or the list)
                self._show(text, cursor_on_first_line=False, keep_menu=True)
            handled = True
        elif key in self._send_keys:
            self.action_submit()
            handled = True
        elif key in self._newline_keys:
            self.action_newline()
            handled = True
        elif key == "tab":
            handled = self._complete()
        elif (joiner := event.character or _JOINER_KEYS.get(key)) in JOINERS and not self.read_only:
            self.insert(joiner)
            handled = True
        elif event.character == "/" and self._with_menu and not self.text and not self.read_only:
            self.insert("/")
            self._open_menu()
            handled = True
        elif key == "up":
            handled = self._take_back() or self._history_back()
        elif key == "down":
            handled = self._history_forward()
        if handled:
            event.stop()
            event.prevent_default()
            self._restart_blink()
            return
        await super()._on_key(event)

    # ---- history --------------------------------------------------------------------

    def _on_first_line(self) -> bool:
        return self.selection.is_empty and self.cursor_location[0] == 0

    def _on_last_line(self) -> bool:
        return self.selection.is_empty and self.cursor_location[0] == self.document.line_count - 1

    def _take_back(self) -> bool:
        """Up in the empty input: the message queued for the agent comes back to edit."""
        if self._recall is None or self.text:
            return False
        text = self._recall()
        if text is None:
            return False
        self._show(text, cursor_on_first_line=False)
        return True

    def put_back(self, text: str) -> None:
        """Text given back to the input to edit (before what is typed there, if anything)."""
        current = self.text
        self._show(text if not current.strip() else f"{text}\n\n{current}",
                   cursor_on_first_line=False)

    def _history_back(self) -> bool:
        if not self._history or not self._on_first_line():
            return False
        if self._history_index is None:
            self._draft = self.text
            index = len(self._history) - 1
        elif self._history_index > 0:
            index = self._history_index - 1
        else:
            return True  # already at the oldest entry
        self._history_index = index
        # The cursor stays on the first line, so the next Up keeps walking back.
        self._show(self._history[index], cursor_on_first_line=True)
        return True

    def _history_forward(self) -> bool:
        if self._history_index is None or not self._on_last_line():
            return False
        index = self._history_index + 1
        if index >= len(self._history):
            self._history_index = None
            self._show(self._draft, cursor_on_first_line=False)
            self._draft = ""
        else:
            self._history_index = index
            self._show(self._history[index], cursor_on_first_line=False)
        return True

    def _show(self, text: str, *, cursor_on_first_line: bool, keep_menu: bool = False) -> None:
        self._clear_hint()
        if self.menu is not None and not keep_menu:  # history, a text put back: no menu
            self.menu.close()
        self.replace(text, self.document.start, self.document.end)
        if cursor_on_first_line:
            first = text.split("\n", 1)[0]
            self.move_cursor((0, len(first)))
        else:
            self.move_cursor(self.document.end)

    # ---- completion -----------------------------------------------------------------

    def _complete(self) -> bool:
        if self._completer is None or not self.selection.is_empty:
            return False
        row, column = self.cursor_location
        before = self.get_text_range(self.document.start, self.cursor_location)
        if not before.strip():
            return False  # nothing typed: Tab moves the focus as usual
        word = _LAST_WORD.search(before.split("\n")[-1])
        current = word.group() if word else ""
        start = (row, column - len(current))
        candidates = list(dict.fromkeys(self._completer(before)))
        if not candidates:
            self._clear_hint()
            self.app.bell()
            return True
        if len(candidates) == 1:
            self.replace(candidates[0] + " ", start, self.cursor_location)
            self._clear_hint()
            return True
        prefix = os.path.commonprefix(candidates)
        if len(prefix) > len(current) and prefix.startswith(current):
            self.replace(prefix, start, self.cursor_location)
        hint = "  ".join(candidates[:HINT_LIMIT])
        if len(candidates) > HINT_LIMIT:
            hint += f"  … +{len(candidates) - HINT_LIMIT}"
        self.border_subtitle = Text(sanitize(hint))
        self._hint_for = self.text
        return True

    def _clear_hint(self) -> None:
        if self._hint_for is not None:
            self._hint_for = None
            self.border_subtitle = None

    def _on_text_area_changed(self, event: TextArea.Changed) -> None:
        # Editing after a completion makes its candidate list stale.
        text = self.text
        if self._hint_for is not None and text != self._hint_for:
            self._clear_hint()
        if self.menu is not None:
            self.menu.follow(text)

    def _open_menu(self) -> None:
        """A "/" typed in the empty input: the command menu opens over it."""
        if self.menu is None:
            if self.parent is None:
                return
            from ikigai_tui.tui.widgets.command_menu import CommandMenu  # (the registry, then)

            self.menu = CommandMenu(id="command-menu", keymap=self._keymap)
            self.parent.mount(self.menu, before=self)
        self.menu.open()
