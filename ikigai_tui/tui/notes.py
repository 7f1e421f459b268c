"""Lines a pane shows that are not in the log: an error that wrote nothing, the command
that failed, a retry. They are kept per agent while the program runs, each after the
entry it followed, so they are still there when the user switches to another agent and
back (a new pane reads the agent's latest page: the notes are put back in it).
"""

from __future__ import annotations

from collections.abc import Iterable

from ikigai_tui.core.events import Event
from ikigai_tui.tui.transcript import SHOWN_KINDS, Item

MAX_NOTES = 50  # kept per agent (the oldest go first)


class Notes:
    """Every agent's notes, and the newest entry of each agent seen (their anchors)."""

    def __init__(self) -> None:
        self._notes: dict[str, list[tuple[int, Item]]] = {}
        self._newest: dict[str, int] = {}

    def seen(self, events: Iterable[Event]) -> None:
        """Committed events: the newest shown entry of each agent (a later note's place)."""
        for event in events:
            if event.kind in SHOWN_KINDS and event.id > self._newest.get(event.agent_id, 0):
                self._newest[event.agent_id] = event.id

    def add(self, agent_id: str, item: Item, shown: Iterable[Item] = ()) -> None:
        """A note for the agent, after its newest entry (the log's, or the pane's)."""
        anchor = max([self._newest.get(agent_id, 0), *(i.key for i in shown if i.key > 0)])
        notes = self._notes.setdefault(agent_id, [])
        notes.append((anchor, item))
        del notes[:-MAX_NOTES]

    def pages(self, agent_id: str, pages):
        """The agent's pages, its notes put back in its latest page."""
        notes = self._notes.setdefault(agent_id, [])

        async def noted(*, before: int | None = None, after: int | None = None,
                        oldest: bool = False, limit: int = 60) -> list[Item]:
            items = await pages(before=before, after=after, oldest=oldest, limit=limit)
            if notes and before is None and after is None and not oldest:
                return merge(items, notes)
            return items

        noted.__wrapped__ = pages  # what it wraps (functools' convention): AgentPages.outside...
        return noted


def merge(items: list[Item], notes: list[tuple[int, Item]]) -> list[Item]:
    """The page with each note after the entries up to its anchor; a note anchored before
    the page (it belongs to an older one) is left out, one anchored after it goes last."""
    keys = [item.key for item in items if item.key > 0]
    first = keys[0] if keys else 0
    anchored = sorted((n for n in notes if n[0] > 0 and n[0] >= first), key=lambda n: n[0])
    out: list[Item] = []
    at = 0
    for item in items:
        while item.key > 0 and at < len(anchored) and anchored[at][0] < item.key:
            out.append(anchored[at][1])
            at += 1
        out.append(item)
    out.extend(note for _anchor, note in anchored[at:])
    out.extend(note for anchor, note in notes if anchor == 0)
    return out
