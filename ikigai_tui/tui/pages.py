"""Pages of an agent's transcript for its scrollback, read on demand.

A child's transcript begins with what it inherited at fork (its parent's context at that
moment, held by the replayer) and goes on with its own events (in the log). Both parts
are paged alike, so a child forked from a long conversation costs no more to show than
its parent: a page never holds more than `limit` entries of either part.

Every inherited entry is an event of the parent written before the fork, so its key
(event id) is below the fork event's; the child's own events come after it. A page
boundary key therefore says which part it lies in. The separator between the parts
takes the fork event's id as its key, so a range that begins or ends with it pages on
correctly.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import TYPE_CHECKING

from ikigai_tui.core.events import Event
from ikigai_tui.tui.transcript import (
    SHOWN_KINDS, Item, item_from_event, items_from_events, removal_label,
)

if TYPE_CHECKING:
    from ikigai_tui.core.session import Session

class AgentPages:
    """`pages(before=, after=, oldest=, limit=)` for one agent's scrollback."""

    def __init__(self, session: Session, agent_id: str) -> None:
        self.session = session
        self.agent_id = agent_id
        agent = session.tree[agent_id]
        self.parent_id = agent.parent_id
        self.boundary = agent.fork_event_id or 0
        self._inherited: list[Item] | None = None
        self._keys: list[int] = []
        self.separator = Item(self.boundary, "note", "(this agent's own messages follow)")

    async def inherited(self) -> list[Item]:
        if self._inherited is None:
            items: list[Item] = []
            if self.parent_id is not None:
                replayer = await self.session.replayer(self.agent_id)
                for key, kind, payload in await self.session.bodies.inherited(replayer):
                    if kind == "summary":
                        items.append(Item(key, "note", f"Summary: {payload.get('content', '')}"))
                    else:
                        item = item_from_event(Event(key, self.agent_id, kind, payload, 0.0))
                        if item is not None:
                            items.append(item)
            self._inherited = items
            self._keys = [item.key for item in items]
        return self._inherited

    def head(self) -> Item:
        count = len(self._inherited or ())
        parent = self.session.tree.label(self.parent_id) if self.parent_id else "?"
        return Item(-2, "note", f"Forked from {parent}: {count:,} inherited message"
                                f"{'s' if count != 1 else ''}")

    # -- what the agent sees -----------------------------------------------------

    def busy(self) -> bool:
        """Whether a turn of the agent runs in this process (its calls without a result
        are running)."""
        agent = self.session.tree[self.agent_id] if self.agent_id in self.session.tree else None
        return agent is not None and agent.busy

    def context_version(self) -> object:
        """Changes whenever a message may have entered or left the context other than by
        being appended (a clear, rewind, filter, undo...), or once the context is loaded."""
        replayer = self.session.tree[self.agent_id].replayer
        return None if replayer is None else (id(replayer), replayer.changes)

    def outside(self, key: int) -> str | None:
        """Why the message `key` is not in the agent's context, or None if it is (or it is
        not known yet: the context is read after the first paint)."""
        replayer = self.session.tree[self.agent_id].replayer
        if replayer is None:
            return None
        row = replayer.removal(key)
        return None if row is None else removal_label(row[1], row[2])

    async def history_keys(self) -> list[int]:
        """The key of every entry of the transcript, in order (the whole history, for the
        scrollbar): the inherited entries and the separator, then the agent's own."""
        own = await self.session.store.page_keys(self.agent_id, SHOWN_KINDS)
        if self.parent_id is None:
            return own
        await self.inherited()
        return [*self._keys, self.boundary, *own]

    async def own(self, limit: int, **where: int | None) -> tuple[list[Item], int]:
        events = await self.session.store.page(self.agent_id, SHOWN_KINDS, limit=limit, **where)
        return items_from_events(events), len(events)

    async def __call__(self, *, before: int | None = None, after: int | None = None,
                       oldest: bool = False, limit: int = 60) -> list[Item]:
        if self.parent_id is None:
            if oldest:
                after = 0
            items, _count = await self.own(limit, before=before, after=after)
            return items
        inherited = await self.inherited()
        if oldest:
            return [self.head(), *await self._inherited_from(0, limit)]
        if after is not None:
            if after >= self.boundary:
                items, _count = await self.own(limit, after=after)
                return items
            return await self._inherited_from(bisect_right(self._keys, after), limit)
        if before is None or before > self.boundary:
            own, count = await self.own(limit, before=before)
            if count >= limit:
                return own
            room = limit - len(own)
            tail = self._inherited_until(len(inherited), room) if inherited else [self.head()]
            return [*tail, self.separator, *own]
        return self._inherited_until(bisect_left(self._keys, before), limit)

    def _inherited_until(self, end: int, limit: int) -> list[Item]:
        """Up to `limit` inherited entries before index `end`; the head goes with the first."""
        if end <= 0 or limit <= 0:
            return []
        start = max(0, end - limit)
        chunk = (self._inherited or [])[start:end]
        return [self.head(), *chunk] if start == 0 else chunk

    async def _inherited_from(self, start: int, limit: int) -> list[Item]:
        """Up to `limit` inherited entries from index `start`; where they run out, the
        separator and the first of the agent's own."""
        inherited = self._inherited or []
        chunk = inherited[start:start + limit]
        room = limit - len(chunk)
        if start + len(chunk) < len(inherited) or room <= 0:
            return chunk
        own, _count = await self.own(room, after=0)
        return [*chunk, self.separator, *own]
