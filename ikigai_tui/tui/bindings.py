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

__all__ = ["APP", "CURSOR", "CURSOR_MENU", "INPUT", "TREE", "HELP", "PREVIEW", "PREVIEW_LIST",
           "MESSAGE_VIEW", "MATCHING", "CONFIRM", "COMPACT_PREVIEW", "MEMORY_DIFF",
           "MEMORY_FILES", "MEMORY_FILE", "PERMISSION", "OVERVIEW", "HISTORY", "SIDE_ANSWER",
           "COMMAND_MENU", "OWNERS",
           "command_palette"]

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
    # Who needs you (issue 27; tui/attention.py): the next agent that does, the overview.
    Binding("ctrl+n", "next_needing", "Next agent that needs you", show=False, priority=True,
            id="next-needing"),
    Binding("f6", "overview", "Agent overview", show=False, priority=True, id="overview"),
    # Find in the active pane (issue 27 item 6; tui/find_bar.py).
    Binding("ctrl+f", "find", "Find in the pane", show=False, priority=True, id="find"),
    # The cursor mode (issue 27 item 4: act on any message; tui/cursor_actions.py).
    Binding("f7", "cursor_mode", "Cursor mode", show=False, priority=True, id="cursor-mode"),
]

# Inside the cursor mode of a scrollback (tui/widgets/cursor.py reads the keys; PageUp
# and PageDown are the app's, moved to the cursor while the mode is on).
CURSOR: list[Binding] = [
    Binding("up", "cursor_up", "Previous entry", id="cursor-up"),
    Binding("down", "cursor_down", "Next entry", id="cursor-down"),
    Binding("home", "cursor_home", "First entry", id="cursor-home"),
    Binding("end", "cursor_end", "Last entry", id="cursor-end"),
    Binding("f", "cursor_fork", "Fork from here (/fork --at ID)", id="cursor-fork"),
    Binding("m", "cursor_mark", "Mark here (/mark NAME --at ID)", id="cursor-mark"),
    Binding("d", "cursor_forget", "Forget it with its exchange (/forget --preview --ids)",
            id="cursor-forget"),
    Binding("p", "cursor_pin", "Pin its text (/pin)", id="cursor-pin"),
    Binding("c", "cursor_copy", "Copy it as Markdown", id="cursor-copy"),
    Binding("v", "cursor_view", "Show it whole", id="cursor-view"),
    Binding("r", "cursor_restore", "Restore it (/restore ID)", id="cursor-restore"),
    Binding("enter", "cursor_menu", "The actions menu", id="cursor-menu"),
    Binding("escape", "cursor_leave", "Leave the cursor mode", id="cursor-leave"),
]

# The input's (PromptInput): shown in the footer; the keys themselves are handled in its
# `_on_key`, so that they follow the keymap over the text area's own keys.
INPUT: list[Binding] = [
    Binding("enter", "submit", "Send", id="send"),
    Binding("ctrl+j", "newline", "New line", id="newline"),
]

# The cursor mode's action menu (tui/screens/cursor_menu.py; its letters are CURSOR's).
CURSOR_MENU: list[Binding] = [Binding("escape", "dismiss_none", "Close", id="cursor-menu-close")]

# The agent tree's (AgentTreeView). The footer says what the keys do there: Enter focuses
# the agent under the cursor, and Esc (the app's stop-reply key, which from the tree goes
# back to the input) says so, not "Stop reply".
TREE: list[Binding] = [
    Binding("enter", "select_cursor", "Focus agent", id="tree-focus"),
    Binding("escape", "app.stop_reply", "Back to the input", id="tree-back"),
    # Who needs you (issue 27): the dead hidden (kept across restarts), a subtree collapsed.
    Binding("d", "toggle_dead", "Hide/show dead agents", id="tree-dead"),
    Binding("space", "toggle_subtree", "Collapse/expand the subtree", id="tree-collapse"),
]

# The agent overview (F6, OverviewScreen): Enter focuses the agent of the row, Esc or F6 close.
OVERVIEW: list[Binding] = [
    Binding("enter", "choose", "Focus agent", id="overview-focus"),
    Binding("escape", "close", "Close", id="overview-close"),
    Binding("f6", "close", "Close", show=False, id="overview-close"),
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

# /history's list of context changes (HistoryScreen).
HISTORY: list[Binding] = [Binding("escape", "close", "Close", id="history-close")]

# A tool the permission rules ask about (PermissionScreen): keys named as pressed.
PERMISSION: list[Binding] = [
    Binding("y", "answer('once')", "Yes, once"),
    Binding("a", "answer('always')", "Always for this agent"),
    Binding("n,escape", "answer('refuse')", "No",
            key_display=f"{key_name('n')}/{key_name('escape')}"),
]

# /btw and the / menu (issue 27 items 5 and 8, tui/screens/side_answer.py and
# tui/widgets/command_menu.py). The side answer's panel (SideAnswerScreen):
SIDE_ANSWER: list[Binding] = [
    Binding("escape", "close", "Close", id="side-close"),
    Binding("c", "copy", "Copy the answer", id="side-copy"),
]
# The / menu over the input, while it is open (the input's _on_key hands it these keys:
# closed, it takes none of them; up / down are the input's history again).
COMMAND_MENU: list[Binding] = [
    Binding("up", "menu_up", "Previous command", show=False, id="menu-up"),
    Binding("down", "menu_down", "Next command", show=False, id="menu-down"),
    Binding("tab", "menu_complete", "Complete the command", show=False, id="menu-complete"),
    Binding("enter", "menu_choose", "Complete the command, or run a whole one", show=False,
            id="menu-choose"),
    Binding("escape", "menu_close", "Close the menu (the text stays)", show=False,
            id="menu-close"),
]

# Every table, by owner.
OWNERS: dict[str, list[Binding]] = {
    "app": APP, "input": INPUT, "agent tree": TREE, "help": HELP, "preview": PREVIEW,
    "preview list": PREVIEW_LIST, "message view": MESSAGE_VIEW, "matching": MATCHING,
    "confirm": CONFIRM, "compact preview": COMPACT_PREVIEW, "memory diff": MEMORY_DIFF,
    "memory files": MEMORY_FILES, "memory file": MEMORY_FILE, "permission": PERMISSION,
    "overview": OVERVIEW, "history": HISTORY,
    "cursor mode": CURSOR, "cursor menu": CURSOR_MENU,
    "side answer": SIDE_ANSWER, "command menu": COMMAND_MENU,
}


def command_palette() -> Binding:
    """Textual's key for the command palette, with the id the keymap moves it by."""
    from textual.app import App

    return Binding(App.COMMAND_PALETTE_BINDING, "command_palette", "palette",
                   id="command-palette")
