"""The main screen's key actions: agents, panes, scrolling, the tree, copying a reply.

A mixin of `IkigaiApp` over what it uses of the app (`ActionsHost`); the bindings are
tui/bindings.py's APP. These keys work from the input too (their bindings have priority
over the input's own keys, e.g. Ctrl+W), and they belong to the main screen: while a
dialog (Help, the preview) is open, `check_action` turns them off, so a dialog's PageUp
scrolls the dialog, not a pane behind it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from textual.screen import ModalScreen

from ikigai_tui.tui.host import AppHost
from ikigai_tui.tui.transcript import Item

if TYPE_CHECKING:
    from textual.geometry import Size
    from textual.notifications import SeverityLevel
    from textual.screen import Screen

    from ikigai_tui.tui.ui_state import PlaceKeeper
    from ikigai_tui.tui.widgets.agent_tree import AgentTreeView
    from ikigai_tui.tui.widgets.prompt import PromptInput

MAIN_SCREEN_ACTIONS = frozenset({
    "focus_tree", "agent", "split", "close_pane", "next_pane", "toggle_tools", "scroll",
    "toggle_tree", "tree_width", "copy_reply", "editor", "zoom",
})
TREE_MIN = 16  # the tree's narrowest (as styles/app.tcss's min-width)
MAIN_MIN = 40  # the cells a key or a drag leaves the panes at least


class ActionsHost(AppHost, Protocol):
    """What the main screen's actions use of the app."""

    agent_tree: AgentTreeView
    prompt_input: PromptInput
    place_keeper: PlaceKeeper
    tree_width: int | None
    show_outside: bool
    show_ids: bool

    @property
    def screen(self) -> Screen[object]: ...

    @property
    def size(self) -> Size: ...

    async def focus_agent(self, agent_id: str) -> None: ...

    def set_tree_width(self, width: int, *, keep: bool = False) -> None: ...

    def fit_tree(self) -> None: ...

    def unzoom(self) -> None: ...  # (tui/zoom.py)

    def notify(self, message: str, *, severity: SeverityLevel = "information") -> None: ...

    def copy_to_clipboard(self, text: str) -> None: ...


class MainScreenActions:
    """Key actions of the main screen (a mixin of `IkigaiApp`)."""

    def check_action(self: ActionsHost, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in MAIN_SCREEN_ACTIONS and isinstance(self.screen, ModalScreen):
            return False
        return True

    # -- agents --------------------------------------------------------------------

    def action_focus_tree(self: ActionsHost) -> None:
        if not self.agent_tree.display:
            self.agent_tree.display = True
        self.agent_tree.focus()

    async def action_agent(self: ActionsHost, where: str) -> None:
        session = self.session
        if session is None or self.focused_agent is None:
            return
        tree = session.tree
        me = tree[self.focused_agent]
        target = None
        if where == "parent":
            target = me.parent_id
        elif where == "child":
            children = tree.children(me.id)
            target = children[0].id if children else None
        elif me.parent_id is not None:
            siblings = [a.id for a in tree.children(me.parent_id)]
            step = -1 if where == "prev" else 1
            target = siblings[(siblings.index(me.id) + step) % len(siblings)]
        if target is not None:
            await self.focus_agent(target)

    def action_toggle_tree(self: ActionsHost) -> None:
        """Hide or show the agent tree (the panes take its room)."""
        tree = self.agent_tree
        tree.display = not tree.display
        if not tree.display and tree.has_focus:
            self.prompt_input.focus()

    def action_tree_width(self: ActionsHost, step: int) -> None:
        """Alt+Shift+Left / Right: narrow or widen the tree (shown if it was hidden)."""
        tree = self.agent_tree
        tree.display = True
        # From the width asked last (keys pressed faster than the layout follows add up).
        self.set_tree_width((self.tree_width or tree.outer_size.width) + step, keep=True)

    def on_agent_tree_view_dragged(self: ActionsHost, message) -> None:
        """The tree's edge dragged: follow the mouse; kept when the button is let go."""
        self.set_tree_width(message.width, keep=message.done)

    def set_tree_width(self: ActionsHost, width: int, *, keep: bool = False) -> None:
        """The tree `width` cells wide, kept for the next start when `keep`. A width chosen
        so is no longer held to the 30% a narrow terminal gives the tree by default, only
        to what leaves the panes MAIN_MIN cells (fit_tree, again when the terminal resizes)."""
        self.tree_width = max(TREE_MIN, min(width, self.size.width - MAIN_MIN))
        self.fit_tree()
        if keep:
            self.place_keeper.keep_tree_width(self.tree_width)

    def fit_tree(self: ActionsHost) -> None:
        if self.tree_width is not None:
            width = max(TREE_MIN, min(self.tree_width, self.size.width - MAIN_MIN))
            styles = self.agent_tree.styles
            styles.width = styles.max_width = width  # (over the stylesheet's 30%)

    # -- panes ---------------------------------------------------------------------

    async def action_split(self: ActionsHost) -> None:
        self.unzoom()  # the new pane beside the others, seen
        await self.panes.split()
        self.schedule_refresh()

    async def action_close_pane(self: ActionsHost) -> None:
        if len(self.panes.all()) > 1:
            self.unzoom()  # closing the zoomed pane un-zooms
        await self.panes.close_active()

    async def action_next_pane(self: ActionsHost) -> None:
        await self.panes.cycle()

    def action_toggle_tools(self: ActionsHost) -> None:
        for pane in self.panes.all():
            pane.scrollback.toggle_tools()

    def action_toggle(self: ActionsHost, what: str) -> None:
        """F8, F9: hide or show the messages out of the context ("outside"), or show or
        hide each message's id ("ids"), in every pane (a pane opened later follows)."""
        setattr(self, f"show_{what}", shown := not getattr(self, f"show_{what}"))
        for pane in self.panes.all():
            pane.scrollback.toggle(what, shown)

    async def action_scroll(self: ActionsHost, how: str) -> None:
        pane = self.panes.active
        if pane is None:
            return
        scrollback = pane.scrollback
        if how == "home":
            await scrollback.action_scroll_home()
        elif how == "end":
            await scrollback.action_scroll_end()
        elif how == "page_up":
            scrollback.scroll_page_up(animate=False)
        else:
            scrollback.scroll_page_down(animate=False)

    # -- copying -------------------------------------------------------------------

    def action_copy_reply(self: ActionsHost) -> None:
        """Copy a whole reply of the active pane: the newest one in view (or the newest
        loaded), as its Markdown text."""
        pane = self.panes.active
        item = None if pane is None else reply_in_view(pane.scrollback)
        if item is None:
            self.notify("No reply to copy here.", severity="warning")
            return
        self.copy_to_clipboard(item.text)
        lines = item.text.count("\n") + 1
        self.notify(f"Copied a reply: {len(item.text):,} characters, {lines:,} line"
                    f"{'s' if lines != 1 else ''}.")


def reply_in_view(scrollback) -> Item | None:
    """The newest reply with lines in view, else the newest reply loaded."""
    items, starts = scrollback.items, scrollback._starts
    top = int(scrollback.scroll_y)
    bottom = top + max(1, scrollback.size.height)
    replies = [i for i, item in enumerate(items) if item.kind == "assistant"]

    def shown(index: int) -> bool:
        if index >= len(starts):  # not drawn yet
            return False
        end = starts[index + 1] if index + 1 < len(starts) else len(scrollback._lines)
        return starts[index] < bottom and end > top

    seen = [index for index in replies if shown(index)]
    chosen = seen or replies
    return items[chosen[-1]] if chosen else None
