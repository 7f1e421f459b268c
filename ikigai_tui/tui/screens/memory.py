"""/memory in the TUI: the memory files with their sizes; Enter shows one, Esc closes.

The files are read through the core's memory service (sandboxed, never following a
symlink); the view is read-only: the LLM changes the files with its memory tool, and
/undo reverses its latest change.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static, TextArea
from textual.widgets.option_list import Option

from ikigai_tui.core.handlers.memory import listing
from ikigai_tui.core.memory.sandbox import MemoryRefused
from ikigai_tui.core.memory.service import MemoryService
from ikigai_tui.tui.bindings import MEMORY_FILE, MEMORY_FILES
from ikigai_tui.tui.safe_text import plain, sanitize
from ikigai_tui.tui.styles_path import stylesheet
from ikigai_tui.tui.widgets.keybar import KeyBar

__all__ = ["MemoryFileScreen", "MemoryScreen"]

STYLES = stylesheet("memory.tcss")


def _size(n: int) -> str:
    return f"{n:,} B" if n < 10_000 else f"{n / 1000:,.1f} KB"


class MemoryScreen(ModalScreen[None]):
    """The files of the memories folder; dismisses with None."""

    CSS_PATH = STYLES
    AUTO_FOCUS = "#memory-files"
    BINDINGS = MEMORY_FILES

    def __init__(self, service: MemoryService) -> None:
        super().__init__()
        self.service = service
        self.files: list[tuple[str, int]] = []
        self.problem: str | None = None
        try:
            self.files = listing(service)
        except MemoryRefused as exc:
            self.problem = f"Error: {exc}"

    def compose(self) -> ComposeResult:
        limits = self.service.box.limits
        total = sum(size for _p, size in self.files)
        count = len(self.files)
        head = (f"{count} file{'s' if count != 1 else ''}, {_size(total)} of "
                f"{limits.total_bytes / 1e6:g} MB (at most {limits.files} files, "
                f"{limits.file_bytes / 1e6:g} MB a file). They outlive /clear and compaction.")
        mode = ("The LLM's changes wait for your approval (memory_writes = \"ask\")."
                if self.service.ask else "The LLM changes them with its memory tool; /undo "
                "reverses the latest change.")
        width = max([len(_size(s)) for _p, s in self.files] or [1])
        options = []
        for path, size in self.files:
            row = Text(_size(size).rjust(width) + "   ", style="dim")
            row.append_text(plain(path))
            options.append(Option(row, id=path))
        with Vertical(classes="dialog") as dialog:
            dialog.border_title = "Memory"
            dialog.border_subtitle = "enter: view · esc: close"
            yield Static(head, id="memory-head")
            yield Static(mode, id="memory-mode")
            if self.problem or not self.files:
                yield Static(self.problem or "No memories yet: the LLM writes them with its "
                             "memory tool (ask it to remember something).", id="memory-empty")
            yield OptionList(*options, id="memory-files")
        yield KeyBar()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        path = event.option.id
        if path is not None:
            self.app.push_screen(MemoryFileScreen(self.service, path))

    def action_close(self) -> None:
        self.dismiss(None)


class MemoryFileScreen(ModalScreen[None]):
    """One memory file, read-only with line numbers; Esc goes back to the list."""

    CSS_PATH = STYLES
    AUTO_FOCUS = "#memory-text"
    BINDINGS = MEMORY_FILE

    def __init__(self, service: MemoryService, path: str) -> None:
        super().__init__()
        self.path = path
        try:
            box = service.box
            text = box.read(box.locate(path))
            self.text = "" if text is None else text
            self.problem = None if text is not None else f"Error: {path} no longer exists"
        except MemoryRefused as exc:
            self.text, self.problem = "", f"Error: {exc}"

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog") as dialog:
            dialog.border_title = plain(self.path)
            dialog.border_subtitle = "esc: back to the list"
            if self.problem:
                yield Static(plain(self.problem), id="memory-problem")
            area = TextArea(sanitize(self.text), read_only=True, soft_wrap=True,
                            show_line_numbers=True, highlight_cursor_line=False, id="memory-text")
            area.cursor_blink = False
            yield area
        yield KeyBar()

    def action_close(self) -> None:
        self.dismiss(None)
