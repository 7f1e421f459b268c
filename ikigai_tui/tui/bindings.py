"""Every key binding of the full screen, by its owner: the action registry.

The app, the input, the agent tree and each dialog take their `BINDINGS` from the tables
here; the [keymap] check (tui/keymap.py), Help (F1), the key bar and the command
palette's key panel (Textual's, over the `BINDINGS` in force) read the same tables. This
module imports Textual and the key naming (tui/keys.py) only, never the app or a screen,
so whatever reads it does not pull the full screen in.

A binding with an id can be moved by the user's `[keymap]`; those without one (the
confirmations' y / n, the memory dialogs' Esc) keep their keys.
"""

from __future__ import annotations

from textual.binding import Binding

from ikigai_tui.tui.keys import key_name

__all__ = ["APP", "INPUT", "TREE", "HELP", "PREVIEW", "PREVIEW_LIST", "MESSAGE_VIEW",
           "MATCHING", "CONFIRM", "COMPACT_PREVIEW", "MEMORY_DIFF", "MEMORY_FILES",
           "MEMORY_FILE", "PERMISSION", "OWNERS", "command_palette"]

# The main screen's bindings (IkigaiApp's).
APP: list[Binding] = [
    Binding("ctrl+q", "quit", "Quit", priority=True, id="quit"),
    Binding("escape", "stop_reply", "Stop reply", id="stop-reply"),
    Binding("f1", "help", "Help", id="help"),
    # The agent and pane keys work from the input too (priority: Ctrl+W is not the
    # input's delete-a-word); a dialog turns them off (MainScreenActions.check_action).
    Binding("ctrl+t", "focus_tree", "Agents", priority=True, id="agents"),
    Binding("alt+up", "agent('parent')", "Parent", show=False, priority=True, id="parent"),
    Binding("alt+down", "agent('child')", "Child", show=False, priority=True, id="child"),
    Binding("alt+left", "agent('prev')", "Prev sibling", show=False, priority=True,
            id="prev-sibling"),
    Binding("alt+right", "agent('next')", "Next sibling", show=False, priority=True,
            id="next-sibling"),
    Binding("f2", "split", "Split", priority=True, id="split"),
    Binding("f3", "close_pane", "Close pane", priority=True, id="close-pane"),
    Binding("ctrl+w", "next_pane", "Next pane", show=False, priority=True, id="next-pane"),
    Binding("ctrl+o", "toggle_tools", "Tools", priority=True, id="tools"),
    Binding("ctrl+g", "editor", "Edit the input in $VISUAL / $EDITOR", show=False,
            priority=True, id="editor"),
    Binding("f4", "toggle_tree", "Hide/show the agent tree", show=False, priority=True,
            id="tree"),
    Binding("alt+shift+left", "tree_width(-4)", "Narrow the agent tree (also: drag its edge)",
            show=False, priority=True, id="tree-narrower"),
    Binding("alt+shift+right", "tree_width(4)", "Widen the agent tree (also: drag its edge)",
            show=False, priority=True, id="tree-wider"),
    Binding("f5", "copy_reply", "Copy the reply in view", show=False, priority=True,
            id="copy-reply"),
    Binding("f8", "toggle('outside')", "Hide/show messages out of the context", show=False,
            priority=True, id="out-of-context"),
    Binding("f9", "toggle('ids')", "Show/hide message ids", show=False, priority=True,
            id="ids"),
    # Zoom (issue 27 item 7, tui/zoom.py): Ctrl+L reaches the program in every terminal
    # and tmux, and neither the input (its TextArea) nor Textual binds it.
    Binding("ctrl+l", "zoom", "Zoom the pane to the full width / back", show=False,
            priority=True, id="zoom"),
    Binding("pageup", "scroll('page_up')", "Page up", show=False, priority=True, id="page-up"),
    Binding("pagedown", "scroll('page_down')", "Page down", show=False, priority=True,
            id="page-down"),
    Binding("ctrl+home", "scroll('home')", "Top", show=False, priority=True, id="top"),
    Binding("ctrl+end", "scroll('end')", "Bottom", show=False, priority=True, id="bottom"),
]

# The input's (PromptInput): shown in the footer; the keys themselves are handled in its
# `_on_key`, so that they follow the keymap over the text area's own keys.
INPUT: list[Binding] = [
    Binding("enter", "submit", "Send", id="send"),
    Binding("ctrl+j", "newline", "New line", id="newline"),
]

# The agent tree's (AgentTreeView). The footer says what the keys do there: Enter focuses
# the agent under the cursor, and Esc (the app's stop-reply key, which from the tree goes
# back to the input) says so, not "Stop reply".
TREE: list[Binding] = [
    Binding("enter", "select_cursor", "Focus agent", id="tree-focus"),
    Binding("escape", "app.stop_reply", "Back to the input", id="tree-back"),
]

# Help (F1): Esc, q or F1 close it.
HELP: list[Binding] = [
    Binding("escape", "close", "Close", id="help-close"),
    Binding("q", "close", "Close", show=False, id="help-close"),
    Binding("f1", "close", "Close", show=False, id="help-close"),
]

# The preview of a reviewed command (PreviewScreen) ...
PREVIEW: list[Binding] = [
    Binding("escape", "cancel", "Cancel", id="preview-cancel"),
    Binding("enter", "apply", "Apply", show=False, id="preview-apply"),
    Binding("ctrl+s", "apply", "Apply", id="preview-apply"),
    Binding("a", "select_all", "Select all", id="preview-all"),
    Binding("n", "select_none", "Select none", id="preview-none"),
    Binding("v", "view", "View message", id="preview-view"),
]

# ... and its list (PreviewList), which has the focus.
PREVIEW_LIST: list[Binding] = [
    Binding("up", "cursor_up", "Up", show=False, id="list-up"),
    Binding("down", "cursor_down", "Down", show=False, id="list-down"),
    Binding("pageup", "page_up", "Page up", show=False, id="list-page-up"),
    Binding("pagedown", "page_down", "Page down", show=False, id="list-page-down"),
    Binding("home", "first", "First", show=False, id="list-first"),
    Binding("end", "last", "Last", show=False, id="list-last"),
    Binding("space", "toggle", "Toggle", id="preview-toggle"),
    Binding("enter", "screen.apply", "Apply", show=False, id="preview-apply"),
]

# One message of the preview, whole (MessageScreen).
MESSAGE_VIEW: list[Binding] = [Binding("escape", "close", "Back to the list", id="view-close")]

# The wait while the embeddings of a /forget or /recall by meaning are made (MatchingScreen).
MATCHING: list[Binding] = [Binding("escape", "cancel", "Cancel", id="matching-cancel")]

# A yes / no question (ConfirmScreen): keys named as pressed (keys.key_name), as on its
# buttons.
CONFIRM: list[Binding] = [
    Binding("y", "answer(True)", "Yes"),
    Binding("n,escape", "answer(False)", "No",
            key_display=f"{key_name('n')}/{key_name('escape')}"),
]

# The summary of a /compact, to edit before it is written (CompactPreviewScreen).
COMPACT_PREVIEW: list[Binding] = [
    Binding("escape", "cancel", "Cancel"),
    Binding("ctrl+s", "accept", "Accept"),
]

# One proposed memory change (MemoryDiffScreen).
MEMORY_DIFF: list[Binding] = [Binding("y,enter", "accept", "Accept"),
                              Binding("n,escape", "refuse", "Refuse")]

# The memories folder (MemoryScreen) and one file of it (MemoryFileScreen).
MEMORY_FILES: list[Binding] = [Binding("escape", "close", "Close")]
MEMORY_FILE: list[Binding] = [Binding("escape", "close", "Back to the list")]

# A tool the permission rules ask about (PermissionScreen): keys named as pressed.
PERMISSION: list[Binding] = [
    Binding("y", "answer('once')", "Yes, once"),
    Binding("a", "answer('always')", "Always for this agent"),
    Binding("n,escape", "answer('refuse')", "No",
            key_display=f"{key_name('n')}/{key_name('escape')}"),
]

# Every table, by owner.
OWNERS: dict[str, list[Binding]] = {
    "app": APP, "input": INPUT, "agent tree": TREE, "help": HELP, "preview": PREVIEW,
    "preview list": PREVIEW_LIST, "message view": MESSAGE_VIEW, "matching": MATCHING,
    "confirm": CONFIRM, "compact preview": COMPACT_PREVIEW, "memory diff": MEMORY_DIFF,
    "memory files": MEMORY_FILES, "memory file": MEMORY_FILE, "permission": PERMISSION,
}


def command_palette() -> Binding:
    """Textual's key for the command palette, with the id the keymap moves it by."""
    from textual.app import App

    return Binding(App.COMMAND_PALETTE_BINDING, "command_palette", "palette",
                   id="command-palette")
