"""The help screen: commands, key bindings and how the context works."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from rich import box
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Static

from ikigai_tui.tui.bindings import HELP
from ikigai_tui.tui.find_bar import FIND_KEYS
from ikigai_tui.tui.keymap import keys_in_force
from ikigai_tui.tui.keys import key_name, keys_of
from ikigai_tui.tui.safe_text import plain
from ikigai_tui.tui.styles_path import stylesheet
from ikigai_tui.tui.widgets.keybar import KeyBar

__all__ = ["HelpScreen", "help_keys"]

STYLES = stylesheet("screens.tcss")

LLM_MARK = "●"

# (lead, body) paragraphs on how the context works; trusted text, still shown plain.
CONTEXT_NOTES: tuple[tuple[str, str], ...] = (
    (
        "The context",
        "is what an agent's LLM sees. It is computed from a log that is never edited: "
        "/clear, /rewind, /forget, /remember and /compact only add events that change the "
        "view, and /undo reverses the latest of them. /context shows what is sent.",
    ),
    (
        "Compaction",
        "replaces older turns by one summary: /compact [FOCUS] summarises all but the "
        "latest 2 turns (--keep N), shows the summary to edit, what it replaces and the "
        "saving, and writes nothing until you accept. With auto_compact on in the config, "
        "it runs by itself after a turn once the history (what is sent plus the turns the "
        "window pruned) reaches 90% of the window; a warning comes at 80%.",
    ),
    (
        "The window",
        "keeps what is sent within its size in tokens (/budget). When an agent goes idle, whole turns "
        "leave from the front until the request fits; the latest turn always stays. A "
        "rule in the scrollback shows where the window starts. Pins are outside it and "
        "always sent; what left stays in the log and in the scrollback. With "
        "summarize_pruned on in the config, what left is summarised after each turn into "
        "a share of the window kept for it (summary_reserve, 10%), sent with the pins; "
        "/context shows it.",
    ),
    (
        "Marks",
        "are checkpoints: /mark NAME saves the current position, /rewind NAME and "
        "/clear NAME go back to it, /marks lists them.",
    ),
    (
        "Forks",
        "start a child agent: /fork gives it the whole context, /fork MARK only what came "
        "after the mark. To delegate, /mark R, write the brief, then /fork R PROMPT: the "
        "child starts from the brief alone. Agents run side by side and talk by /send.",
    ),
)


class HelpTable(Widget):
    """A Rich table styled from screens.tcss component classes; rebuilt on each render."""

    COMPONENT_CLASSES = {"help--usage", "help--key", "help--marker", "help--muted"}

    DEFAULT_CSS = """
    HelpTable { height: auto; }
    """

    def _style(self, name: str) -> Style:
        """A component's colour and text style, without a background (the dialog's shows)."""
        style = self.get_component_rich_style(name)
        return Style(color=style.color, bold=style.bold, italic=style.italic)

    def _first_width(self, longest: int, share: float) -> int:
        """Width of the first column: its longest cell, but at most `share` of the width."""
        return max(8, min(longest, int(self.size.width * share)))

    def _table(self) -> Table:
        muted = self._style("help--muted")
        return Table(
            box=box.SIMPLE_HEAD, expand=True, show_edge=False, pad_edge=False,
            header_style=muted, border_style=muted, padding=(0, 2, 0, 0),
        )


class HelpCommands(HelpTable):
    """Usage, summary and whether the LLM may call each command."""

    def __init__(self, commands: list[tuple[str, str, bool]], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._commands = commands

    def render(self) -> Table:
        table = self._table()
        longest = max([len(usage) for usage, _, _ in self._commands] + [12])
        table.add_column("Command", width=self._first_width(longest, 0.47), overflow="fold")
        table.add_column("What it does", ratio=1, overflow="fold")
        table.add_column("LLM", width=3, justify="center", no_wrap=True)
        usage_style = self._style("help--usage")
        marker_style = self._style("help--marker")
        for usage, summary, llm_may_call in self._commands:
            table.add_row(
                plain(usage, usage_style),
                plain(summary),
                Text(LLM_MARK, style=marker_style) if llm_may_call else Text(""),
            )
        if not self._commands:
            table.add_row(Text("(none)", style=self._style("help--muted")), Text(""), Text(""))
        return table


class HelpKeys(HelpTable):
    """Key bindings and what they do."""

    def __init__(self, bindings: list[tuple[str, str]], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._key_rows = bindings

    def render(self) -> Table:
        table = self._table()
        longest = max([len(key) for key, _ in self._key_rows] + [12])
        table.add_column("Key", width=self._first_width(longest, 1 / 3), overflow="fold")
        table.add_column("Action", ratio=1, overflow="fold")
        key_style = self._style("help--key")
        for key, description in self._key_rows:
            table.add_row(plain(key, key_style), plain(description))
        if not self._key_rows:
            table.add_row(Text("(none)", style=self._style("help--muted")), Text(""))
        return table


# Keys of the main screen that no binding of ours holds: (keys as Textual names them, what
# they do), listed with the bindings (help_keys); named on screen by keymap.key_name.
UNBOUND_KEYS: tuple[tuple[str, str], ...] = (
    ("up,down", "The input's history (what you sent this agent, commands too); in the "
                "empty input, Up first takes back a queued message"),
    ("tab", "Complete a command, mark name or agent"),
    ("slash", "In the empty input: the command menu (Up / Down choose, Tab or Enter "
              "complete, Enter runs a whole command, Esc closes it and keeps the text)"),
    ("ctrl+c", "Copy the selected text (drag the mouse over a pane to select)"),
)
# Help's words for a binding where the footer's one or two are too few, by binding id.
SAYS = {
    "send": "Send (while the agent replies: queued, sent when the reply ends)",
    "newline": "A new line in the input",
    "stop-reply": "Take back the queued message to edit; else stop the reply (what "
                  "arrived is kept); from the tree or a pane, back to the input",
    "command-palette": "The command palette: every slash command, the theme, the key panel",
    "agents": "The agent tree (Enter focuses the agent under the cursor)",
    "parent": "Focus the parent agent",
    "child": "Focus the first child agent",
    "prev-sibling": "Focus the previous sibling",
    "next-sibling": "Focus the next sibling",
    "split": "Show another agent beside (the new pane is active)",
    "next-pane": "The next pane",
    "tools": "Expand or collapse tool calls and folded long entries",
    "next-needing": "Focus the next agent that needs you (a finished turn or mail not "
                    "seen, a failure, a permission question, a preview waiting)",
    "overview": "The agent overview: every agent's state, last line, age, tokens and "
                "cost, who needs you first (Enter focuses one)",
    "tree-dead": "In the agent tree: hide or show the dead agents (kept)",
    "tree-collapse": "In the agent tree: collapse or expand the subtree under the cursor",
}
# Help's order: the input's keys and the palette first, then the app's in their order.
FIRST = ("send", "newline", "(unbound)", "stop-reply", "command-palette", "help")


def help_keys(bindings: Iterable[Binding], keymap: Mapping[str, str]) -> list[tuple[str, str]]:
    """(keys, what they do) of every key of the main screen, for Help: the bindings in
    force (`bindings`, the user's keymap applied) and the keys no binding holds."""
    rows = {binding_id: (keys, SAYS.get(binding_id, description))
            for binding_id, keys, description in keys_in_force(bindings, keymap)}
    unbound = [(" / ".join(map(key_name, keys_of(keys))), what) for keys, what in UNBOUND_KEYS]
    ordered: list[tuple[str, str]] = []
    for binding_id in FIRST:
        ordered.extend(unbound if binding_id == "(unbound)" else [rows.pop(binding_id)]
                       if binding_id in rows else [])
    return ordered + list(rows.values())


class HelpScreen(ModalScreen[None]):
    """A scrollable help dialog. Esc, q or F1 close it."""

    CSS_PATH = STYLES
    AUTO_FOCUS = "#help-body"

    BINDINGS = HELP

    def __init__(
        self, commands: list[tuple[str, str, bool]], bindings: list[tuple[str, str]]
    ) -> None:
        super().__init__()
        self._commands = list(commands)
        self._key_rows = list(bindings)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog") as dialog:
            dialog.border_title = "Help"
            dialog.border_subtitle = "ikigai"
            with VerticalScroll(id="help-body"):
                yield Static(Text("Keys"), classes="section -first")
                yield HelpKeys(self._key_rows, id="help-keys")
                yield Static(Text("Keys in the find bar"), classes="section")
                yield HelpKeys(list(FIND_KEYS), id="help-find-keys")
                yield Static(Text("Commands"), classes="section")
                yield HelpCommands(self._commands, id="help-commands")
                yield Static(
                    Content.assemble(
                        (LLM_MARK, "$text-success"),
                        "  the agent's LLM may run this command too, through its slash tool.",
                    ),
                    classes="legend",
                )
                yield Static(Text("Context"), classes="section")
                for lead, body in CONTEXT_NOTES:
                    paragraph = Text()
                    paragraph.append(lead, style="bold")
                    paragraph.append(" " + body)
                    yield Static(paragraph, classes="paragraph")
            close = close_keys(self.BINDINGS, getattr(self.app, "keymap", None) or {})
            scroll = " ".join(map(key_name, ("up", "down", "pageup", "pagedown")))
            yield Static(Text(f"{close}  close      {scroll}  scroll"), classes="hint")
        yield KeyBar()  # this screen's keys, over the main screen's

    def action_close(self) -> None:
        self.dismiss(None)


def close_keys(bindings: Iterable[Binding], keymap: Mapping[str, str]) -> str:
    """The keys that close Help, the user's keymap applied, as the welcome names keys
    ("Esc · Q · F1"; keymap.key_name), not as the keymap spells them ("escape,q,f1")."""
    keys = [key for b in bindings if b.id == "help-close"
            for key in keys_of(keymap.get("help-close") or b.key)]
    return " · ".join(dict.fromkeys(key_name(key) for key in keys))
