"""The agent tree: status, name, context usage and unread mail of every agent.

The usage reads as the gauge's, shorter: ``1% · 1.9K/2K`` is the request's share of the
model's input limit, then what the agent spent so far, ``spent 12K $0.04`` (tokens in
and out, and their cost when the model map prices them), then the request's size over
the window's budget (the gauge shows it too: a narrow tree drops it first).

A row fits the tree's width, its usage whole: the name gives way first (its id, then
the spending, then the name's end); only then are fields dropped from the end, whole,
and the row ends with ``…`` (never cut in the middle of a number); the tree never
scrolls sideways. An agent with news the user has not seen (a turn ended, failed, mail)
carries a ``new`` badge right after its name, kept whatever the width.

A key (tree-dead, `d`) hides the dead agents whose subtrees hold no living one (a line at
the end says how many are hidden); another (tree-collapse, Space) collapses the subtree
under the cursor, its row then saying how many agents it holds (``+3``, with ``!`` when
one of them needs the user) -- see tui/agent_state.py for the states the rows say.

Each node's data is the agent id (None for the line of hidden dead agents). The focused agent is bold with a ``▶`` marker and
the cursor is moved to it when the focus changes; dead agents are dimmed. Enter or a
click on a node posts `AgentTreeView.Selected`. `refresh_agents` updates labels in place
while the set of agents (and their parents) is unchanged, and rebuilds otherwise.
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual import events
from textual.message import Message
from textual.strip import Strip
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from ikigai_tui.tui.bindings import TREE
from ikigai_tui.tui.safe_text import sanitize
from ikigai_tui.tui.tree_rows import (  # noqa: F401 (the rows' names, as importers know them)
    FOCUS_MARKER, PLAIN_TREE, STATUS_GLYPHS, TREE_COMPONENTS, AgentRow, TreeStyles,
    _usage_style, agent_label, agent_row, spent_text,
)
from ikigai_tui.tui.widgets.frame_style import OneStylePerFrame

__all__ = ["STATUS_GLYPHS", "AgentRow", "AgentTreeView", "agent_label", "agent_row", "shown_rows"]

OWN_ACTIONS = ("toggle_dead", "toggle_subtree")
HIDDEN_LINE = "#dead-hidden"  # the shape's entry of the line saying how many dead are hidden


def shown_rows(rows: list[AgentRow], hide_dead: bool,
               collapsed: set[str]) -> tuple[list[AgentRow], int]:
    """The rows shown (parents before children, as `rows` are) and how many dead agents
    are hidden: with `hide_dead`, a dead agent with no living one under it; under a
    `collapsed` agent, everything (its row counts them and says whether one needs you)."""
    living_under: set[str] = set()
    for row in reversed(rows):  # children come after their parents
        if row.parent_id is not None and (row.status != "dead" or row.id in living_under):
            living_under.add(row.parent_id)
    hidden: set[str] = set()
    under: dict[str, list[AgentRow]] = {}
    owner: dict[str, str] = {}  # a hidden agent -> the collapsed row that holds it
    dead = 0
    for row in rows:
        parent = row.parent_id
        if parent is not None and (parent in collapsed and parent not in hidden or parent in owner):
            holder = owner.get(parent, parent)
            owner[row.id] = holder
            under.setdefault(holder, []).append(row)
        elif hide_dead and row.status == "dead" and row.id not in living_under:
            hidden.add(row.id)
            dead += 1
        elif parent in hidden:  # under a hidden dead one: dead too
            hidden.add(row.id)
            dead += 1
    shown = []
    for row in rows:
        if row.id in hidden or row.id in owner:
            continue
        held = under.get(row.id, [])
        if held:
            row = row._replace(under=len(held), under_needs=any(
                r.state is not None and r.state.needs_you for r in held))
        shown.append(row)
    return shown, dead


def _colour_of(widget: Tree, component: str) -> Style:
    """A component's colour and text style, and its background when it sets one."""
    full = widget.get_component_rich_style(component)
    partial = widget.get_component_rich_style(component, partial=True)
    band = widget.get_component_styles(component).background.a > 0
    return Style(color=full.color, bgcolor=full.bgcolor if band else None, bold=partial.bold,
                 italic=partial.italic, dim=partial.dim)


class AgentTreeView(OneStylePerFrame, Tree[str]):
    """Every agent of the session, parents before children, all expanded."""

    COMPONENT_CLASSES = Tree.COMPONENT_CLASSES | set(TREE_COMPONENTS.values())
    BINDINGS = TREE  # the footer says what Enter and Esc do here
    DEFAULT_CSS = """
    AgentTreeView {
        width: 1fr;
        height: 1fr;
        overflow-x: hidden;  /* rows fit the width (agent_label): nothing to scroll to */
    }
    """

    class Selected(Message):
        """The user chose an agent (Enter or click)."""

        def __init__(self, agent_id: str) -> None:
            self.agent_id = agent_id
            super().__init__()

    class Dragged(Message):
        """The tree's right edge dragged: the width it asks for (`done` once let go)."""

        def __init__(self, width: int, done: bool) -> None:
            self.width = width
            self.done = done
            super().__init__()

    class DeadToggled(Message):
        """Dead agents hidden or shown again (the app keeps the choice)."""

        def __init__(self, hidden: bool) -> None:
            self.hidden = hidden
            super().__init__()

    def __init__(
        self,
        *,
        id: str | None = None,
        classes: str | None = None,
        hide_dead: bool = False,
    ) -> None:
        super().__init__(Text("agents"), id=id, classes=classes)
        self.set_reactive(Tree.show_root, False)
        self.set_reactive(Tree.auto_expand, False)
        self.set_reactive(Tree.guide_depth, 3)
        self._agent_nodes: dict[str, TreeNode[str]] = {}
        self._shape: list[tuple[str, str | None]] = []
        self._label_keys: dict[str, tuple] = {}
        self._focused: str | None = None
        self._rows: list[AgentRow] = []
        self._every: list[AgentRow] = []  # every agent's row, hidden ones too
        self._row_of: dict[str, AgentRow] = {}
        self._focus_shown: str | None = None  # the focused agent the labels say
        self._styles: TreeStyles | None = None  # read from the theme at the first label
        self._dragging = False
        self.hide_dead = hide_dead  # dead agents (with no living one under them) not shown
        self.collapsed: set[str] = set()  # agents whose subtrees are not shown
        self.hidden_dead = 0  # how many dead agents are not shown

    @property
    def styles_of_labels(self) -> TreeStyles:
        if self._styles is None:
            self._styles = TreeStyles(**{
                name: _colour_of(self, component) for name, component in TREE_COMPONENTS.items()})
        return self._styles

    def notify_style_update(self) -> None:
        super().notify_style_update()
        if self._styles is not None:  # labelled already: a new theme relabels in its colours
            self.call_later(self._restyle)

    def _restyle(self) -> None:
        old, self._styles = self._styles, None
        if self.is_mounted and self.styles_of_labels != old and self._rows:
            self._label_keys.clear()
            self.refresh_agents(self._rows, self._focused or "")

    def render_line(self, y: int) -> Strip:
        # Tree.render_line, with the style read once per frame (widgets/frame_style.py).
        scroll_x, scroll_y = self.scroll_offset
        return self._render_line(y + scroll_y, scroll_x, scroll_x + self.size.width,
                                 self.line_style)

    def process_label(self, label: str | Text) -> Text:
        # Never parse markup: a str label is plain text.
        if isinstance(label, str):
            label = Text(sanitize(label))
        return label.split()[0] if label.plain else label

    def render_label(self, node: TreeNode[str], base_style: Style, style: Style) -> Text:
        # Fitted to the room the node's line has (Tree.get_label_width measures this too,
        # so the tree is never wider than itself). Textual lays the line's style (the
        # cursor's, the hover's) over the whole label, which would paint a warning usage
        # or unread mail in the cursor's colour; put it under the label's own colours.
        row = self._row_of.get(node.data) if node.data is not None else None
        if row is None:
            text = super().render_label(node, base_style, Style())
        else:
            text = agent_label(row, row.id == self._focus_shown, self.styles_of_labels,
                               self._room(node))
        text.stylize_before(style)
        return text

    def _room(self, node: TreeNode[str]) -> int | None:
        """The cells left for the node's label after its guides (None before layout)."""
        depth, parent = 0, node.parent
        while parent is not None and parent is not self.root:
            depth, parent = depth + 1, parent.parent
        room = self.scrollable_content_region.width - depth * self.guide_depth
        return max(1, room) if self.scrollable_content_region.width > 0 else None

    @property
    def agent_ids(self) -> list[str]:
        """Ids of the agents shown, in display order."""
        return [agent_id for agent_id, _ in self._shape if agent_id != HIDDEN_LINE]

    def node_for(self, agent_id: str) -> TreeNode[str] | None:
        return self._agent_nodes.get(agent_id)

    def refresh_agents(self, every: list[AgentRow], focused: str) -> None:
        """Show `every` agent's row (parents first), but the dead hidden and what the
        collapsed rows hold."""
        self._every = every
        rows, self.hidden_dead = shown_rows(every, self.hide_dead, self.collapsed)
        self._rows = rows
        self._row_of = {row.id: row for row in rows}
        self._focus_shown = focused
        shape = [(row.id, row.parent_id) for row in rows] + self._hidden_shape()
        if shape != self._shape:
            self._rebuild(rows, focused)
        else:
            for row in rows:
                key = (row, row.id == focused)
                if self._label_keys.get(row.id) != key:
                    self._label_keys[row.id] = key
                    self._agent_nodes[row.id].set_label(agent_label(row, row.id == focused, self.styles_of_labels))
        if focused != self._focused or self.cursor_node is None:
            self._focused = focused
            node = self._agent_nodes.get(focused)
            if node is not None:
                _ = self.last_line  # lay the lines out, so the node knows its line
                self.move_cursor(node)

    def _rebuild(self, rows: list[AgentRow], focused: str) -> None:
        self.root.remove_children()
        self._agent_nodes.clear()
        self._label_keys.clear()
        for row in rows:
            parent = self._agent_nodes.get(row.parent_id) if row.parent_id else None
            node = (parent or self.root).add(
                agent_label(row, row.id == focused, self.styles_of_labels),
                data=row.id,
                expand=True,
                allow_expand=False,
            )
            self._agent_nodes[row.id] = node
            self._label_keys[row.id] = (row, row.id == focused)
        self._shape = [(row.id, row.parent_id) for row in rows] + self._hidden_shape()
        if self.hidden_dead:
            self.root.add_leaf(Text(f"({self.hidden_dead} dead hidden)", style="dim"))
        self._focused = None  # place the cursor again

    def _hidden_shape(self) -> list[tuple[str, str | None]]:
        return [(HIDDEN_LINE, str(self.hidden_dead))] if self.hidden_dead else []

    # -- hiding the dead, collapsing subtrees -------------------------------------

    def action_toggle_dead(self) -> None:
        self.hide_dead = not self.hide_dead
        self.post_message(self.DeadToggled(self.hide_dead))
        self._reshow()

    def action_toggle_subtree(self) -> None:
        node = self.cursor_node
        if node is None or node.data is None:
            return
        agent_id = node.data
        if agent_id in self.collapsed:
            self.collapsed.discard(agent_id)
        elif any(row.parent_id == agent_id for row in self._every):
            self.collapsed.add(agent_id)
        else:
            return  # nothing under it
        self._focused = None
        self.refresh_agents(self._every, self._focus_shown or "")
        moved = self._agent_nodes.get(agent_id)
        if moved is not None:
            self.move_cursor(moved)

    async def on_key(self, event: events.Key) -> None:
        """The tree's own letter keys (`d`, or what the keymap moved them to) are the
        tree's: the app sends a letter typed outside the input to the input otherwise."""
        active = self.screen.active_bindings.get(event.key)
        if active is not None and active.node is self and active.binding.action in OWN_ACTIONS:
            event.stop()
            event.prevent_default()
            await self.run_action(active.binding.action)

    def _reshow(self) -> None:
        if self._every:
            self.refresh_agents(self._every, self._focus_shown or "")

    # -- dragging the right edge (its border) -------------------------------------

    def on_mouse_down(self, event: events.MouseDown) -> None:
        if event.button == 1 and event.x >= self.outer_size.width - 1:
            event.stop()
            self._dragging = True
            self.capture_mouse()

    def on_mouse_move(self, event: events.MouseMove) -> None:
        if self._dragging:
            event.stop()
            self.post_message(self.Dragged(event.screen_x - self.region.x + 1, done=False))

    def on_mouse_up(self, event: events.MouseUp) -> None:
        if self._dragging:
            event.stop()
            self._dragging = False
            self.release_mouse()
            self.post_message(self.Dragged(event.screen_x - self.region.x + 1, done=True))

    def on_tree_node_selected(self, event: Tree.NodeSelected[str]) -> None:
        event.stop()
        if event.node.data is not None:
            self.post_message(self.Selected(event.node.data))
