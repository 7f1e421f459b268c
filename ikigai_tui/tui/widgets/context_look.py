"""What the scrollback knows of the agent's context: which loaded messages the agent no
longer sees and why, and the width of the ids gutter.

The reasons come from the pages (AgentPages.outside, from the core's replayer); they
are asked again only when the context changed other than by an append (the replayer's
change counter), and only for the loaded items, so a 100,000-message agent costs what a
short one does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ikigai_tui.tui.render import MESSAGE_KINDS
from ikigai_tui.tui.transcript import Item

MIN_ID_WIDTH = 4  # the ids gutter: at least 3 digits and a space


class ContextLook:
    def __init__(self, pages: object) -> None:
        while not hasattr(pages, "outside") and hasattr(pages, "__wrapped__"):
            pages = pages.__wrapped__  # a wrapper of the pages (tui/notes.py)
        self._outside: Callable[[int], str | None] | None = getattr(pages, "outside", None)
        self._version_of: Callable[[], object] | None = getattr(pages, "context_version", None)
        self.version: object = None
        self.reasons: dict[int, str] = {}  # key -> why it is out, as last drawn
        self.show_outside = True
        self.show_ids = False
        self.id_width = 0

    def reason(self, item: Item) -> str | None:
        """Why the item is out of the context (None: it is in, or it is no message),
        remembered as the reason it is drawn with."""
        if self._outside is None or item.kind not in MESSAGE_KINDS or item.key <= 0:
            return None
        reason = self._outside(item.key)
        if reason is None:
            self.reasons.pop(item.key, None)
        else:
            self.reasons[item.key] = reason
        return reason

    def keep(self, items: Sequence[Item]) -> None:
        """Forget the reasons of items no longer loaded (the range moved on)."""
        if len(self.reasons) > len(items):
            loaded = {item.key for item in items}
            self.reasons = {k: v for k, v in self.reasons.items() if k in loaded}

    def changed(self, items: Sequence[Item]) -> list[int]:
        """Indexes of the items whose reason changed since they were drawn; [] at once
        while the context has not changed."""
        version = self._version_of() if self._version_of is not None else None
        if version == self.version:
            return []
        self.version = version
        out = []
        for index, item in enumerate(items):
            if item.kind in MESSAGE_KINDS and item.key > 0:
                before = self.reasons.get(item.key)
                if self.reason(item) != before:
                    out.append(index)
        return out

    def wanted_id_width(self, items: Sequence[Item]) -> int:
        """The gutter for the largest id loaded (0 while ids are not shown)."""
        if not self.show_ids:
            return 0
        largest = max((item.key for item in items), default=0)
        return max(MIN_ID_WIDTH, len(str(largest)) + 1)


def key_names_of(app: object) -> dict[str, str]:
    """The keys in force by binding id (IkigaiApp.key_names; none in another app)."""
    return getattr(app, "key_names", None) or {}
