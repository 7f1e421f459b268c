"""The app's default screen: styled once at start, with the input focused from the start.

Textual's default screen restyles every widget again when it is first shown (ScreenResume:
the styles might have changed while a screen was hidden; this one never was), and its
auto-focus gives the first focusable widget (the agent tree) the focus before on_mount
moves it to the input: two more restyles of the tree (its :focus rules), each one also
restyling the component classes it is drawn with. On the first frame's path, that is a
third of the styling the start does (benchmarks/tui.py, cold_start_vs_minimal_textual).
"""

from __future__ import annotations

from textual import events
from textual.message import Message
from textual.screen import Screen


class MainScreen(Screen):
    AUTO_FOCUS = "#prompt"

    def __init__(self) -> None:
        super().__init__(id="_default")
        self._shown = False

    def post_message(self, message: Message) -> bool:
        if isinstance(message, events.ScreenResume) and not self._shown:
            # The first showing: every widget was styled as it was mounted, a moment ago.
            self._shown = True
            message.refresh_styles = False
        return super().post_message(message)
