"""Zoom (issue 27 item 7): the focused pane alone at the full width, and back.

One key (bindings.APP's `zoom`) hides the agent tree and the other panes, the gauge and
the input kept, and says "zoomed" in the pane's title; the same key brings the layout
back as it was: the tree shown or hidden, at the width it had, and every pane (the panes
share the width equally, so showing them again gives each its width back). While zoomed
the zoom follows the active pane (Ctrl+W, Alt+arrows, an agent chosen in the tree, which
Ctrl+T shows for the choice and which hides again once one is chosen); splitting
(F2) or closing the zoomed pane (F3) un-zooms first. A mixin of `IkigaiApp`, typed with
`ZoomHost`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from ikigai_tui.tui.actions import ActionsHost

if TYPE_CHECKING:
    from textual.css.scalar import Scalar

    from ikigai_tui.tui.widgets.agent_tree import AgentTreeView

__all__ = ["PaneZoom", "TreeLayout", "ZoomHost"]


@dataclass(frozen=True)
class TreeLayout:
    """The tree as it was before the zoom (what un-zooming restores)."""

    shown: bool
    width: int | None  # the app's chosen width (None: the stylesheet's)
    style_width: Scalar | None
    style_max_width: Scalar | None


class ZoomHost(ActionsHost, Protocol):
    zoomed_from: TreeLayout | None
    key_names: dict[str, str]

    def zoom(self) -> None: ...


class PaneZoom:
    """The zoom key's action (a mixin of `IkigaiApp`)."""

    zoomed_from: TreeLayout | None = None  # None: not zoomed

    def action_zoom(self: ZoomHost) -> None:
        if self.zoomed_from is None:
            self.zoom()
        else:
            self.unzoom()

    def zoom(self: ZoomHost) -> None:
        tree = self.agent_tree
        self.zoomed_from = TreeLayout(tree.display, self.tree_width, tree.styles.width,
                                      tree.styles.max_width)
        _hide(self, tree)
        key = self.key_names.get("zoom")
        self.panes.zoom(f"zoomed ({key} restores)" if key else "zoomed")

    def unzoom(self: ZoomHost) -> None:
        """The layout as it was before the zoom (nothing when not zoomed)."""
        saved = self.zoomed_from
        if saved is None:
            return
        self.zoomed_from = None
        self.panes.zoom(None)
        tree = self.agent_tree
        if self.tree_width != saved.width:  # moved while zoomed (Alt+Shift+arrows)
            self.tree_width = saved.width
            tree.styles.width, tree.styles.max_width = saved.style_width, saved.style_max_width
            if saved.width is not None:
                self.place_keeper.keep_tree_width(saved.width)
        if saved.shown:
            tree.display = True
        else:
            _hide(self, tree)

    def on_agent_tree_view_selected(self: ZoomHost, _message: object) -> None:
        """While zoomed, the tree shown for a choice goes once the agent is chosen."""
        if self.zoomed_from is not None:
            _hide(self, self.agent_tree)


def _hide(app: ZoomHost, tree: AgentTreeView) -> None:
    tree.display = False
    if tree.has_focus:
        app.prompt_input.focus()
