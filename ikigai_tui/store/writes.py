"""What every engine's store does the same way: writes queued and committed in groups by
one writer task, the commit hooks (the change feed's delivery), and the event references
a batch resolves once its ids are known."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Any

from ikigai_tui.core.events import AgentRecord, Event, EventRef, WriteBatch
from ikigai_tui.core.ports import CommitHook, StoreError

log = logging.getLogger(__name__)

Delivery = tuple[list[Event], list[AgentRecord], list[tuple[str, str, Any]]]


class GroupCommit:
    """Mixed into a store: needs `readonly`, `path` (as shown) and `_commit(batches)`,
    which commits the batches in one transaction and returns their events."""

    readonly: bool
    path: Any
    _high: int | None  # the last id handed to the hooks (None until start_feed)

    def _start_writes(self) -> None:
        self._queue: asyncio.Queue[tuple[WriteBatch, asyncio.Future]] = asyncio.Queue()
        self._writer: asyncio.Task | None = None
        self._hooks: list[tuple[CommitHook, bool]] = []
        self._closed = False

    async def _stop_writes(self) -> None:
        """Commit what is queued, then stop the writer."""
        if self._writer is not None:
            await self._queue.join()
            self._writer.cancel()
            try:
                await self._writer
            except asyncio.CancelledError:
                pass

    async def _commit(self, batches: list[WriteBatch]) -> list[list[Event]]:
        raise NotImplementedError

    def add_commit_hook(self, hook: CommitHook, *, with_origin: bool = False) -> None:
        """Called after each commit with the new events in id order, before writers
        resume; after start_feed, with other writers' events too. With with_origin the
        hook gets a fourth argument: True for other writers' events."""
        self._hooks.append((hook, with_origin))

    async def write(self, batch: WriteBatch) -> list[Event]:
        """Commit a batch atomically; returns its events with their ids. A database that
        cannot take it raises StoreError: nothing of the batch is written and everything
        committed before is kept."""
        if self._closed:
            raise StoreError("the database is closed")
        if self.readonly:
            raise StoreError(f"cannot write to {self.path}: it was opened read-only")
        if self._writer is None or self._writer.done():
            self._writer = asyncio.get_running_loop().create_task(self._write_loop())
        future: asyncio.Future = asyncio.get_running_loop().create_future()
        self._queue.put_nowait((batch, future))
        return await future

    async def append(self, agent_id: str, kind: str, payload: dict) -> Event:
        batch = WriteBatch()
        batch.add(agent_id, kind, payload)
        return (await self.write(batch))[0]

    async def _write_loop(self) -> None:
        while True:
            group = [await self._queue.get()]
            while not self._queue.empty():
                group.append(self._queue.get_nowait())
            try:
                await self._commit_group(group)
            finally:
                for _ in group:
                    self._queue.task_done()

    async def _commit_group(self, group: list[tuple[WriteBatch, asyncio.Future]]) -> None:
        live = [(b, f) for b, f in group if not f.cancelled()]
        if not live:
            return
        try:
            results = await self._commit([b for b, _ in live])
        except Exception as exc:
            if len(live) > 1:
                # One bad batch must not fail the others: retry them one by one.
                for item in live:
                    await self._commit_group([item])
            elif not live[0][1].done():
                live[0][1].set_exception(exc)
            return
        for (_, future), events in zip(live, results):
            if not future.done():
                future.set_result(events)

    async def _deliver_foreign(self, read: Any, batch: int) -> int:
        """Hand the hooks, in id order, every event after the last one delivered
        (`self._high`), read `batch` at a time by `read(after, limit)`; how many."""
        count = 0
        while True:
            delivery = await read(self._high, batch)
            if not delivery[0]:
                return count
            self._high = delivery[0][-1].id
            self._deliver(delivery, foreign=True)
            count += len(delivery[0])
            if len(delivery[0]) < batch:
                return count

    def _deliver(self, delivery: Delivery, foreign: bool = False) -> None:
        for hook, with_origin in self._hooks:
            # The transaction is committed: a failing hook must never make the caller
            # think otherwise (a retry would write the batch twice).
            try:
                if with_origin:
                    hook(*delivery, foreign)
                else:
                    hook(*delivery)
            except Exception:
                log.exception("commit hook failed")


def derived_updates(events: list[Event]) -> list[tuple[str, str, Any]]:
    """The agents-table changes that events stand for (what `agents` rows derive from)."""
    out: list[tuple[str, str, Any]] = []
    for e in events:
        if e.kind == "kill":
            out.append((e.agent_id, "status", "dead"))
        elif e.kind == "revive":
            out.append((e.agent_id, "status", "idle"))
        elif e.kind == "model" and e.payload.get("model"):
            out.append((e.agent_id, "model", e.payload["model"]))
        elif e.kind == "rename" and e.payload.get("name"):
            out.append((e.agent_id, "name", e.payload["name"]))
    return out


def agent_params(agent: AgentRecord) -> tuple:
    return (
        agent.id, agent.parent_id, agent.name, agent.model, agent.status,
        agent.created_at, agent.fork_event_id, agent.budget,
    )


def parents_first(agents: Iterable[AgentRecord]) -> list[AgentRecord]:
    """The agents in their order, except that each comes after its parent (a log copied
    whole: a parent's row must exist before its children's)."""
    pending = list(agents)
    known = {a.id for a in pending}
    placed: set[str] = set()
    out: list[AgentRecord] = []
    while pending:
        waiting = []
        for agent in pending:
            if agent.parent_id is None or agent.parent_id in placed or agent.parent_id not in known:
                out.append(agent)
                placed.add(agent.id)
            else:
                waiting.append(agent)
        if len(waiting) == len(pending):  # a cycle: the database will say what is wrong
            out.extend(waiting)
            break
        pending = waiting
    return out


def resolve_agent(agent: AgentRecord, first_id: int, now: float) -> AgentRecord:
    fork = agent.fork_event_id
    if isinstance(fork, EventRef):
        fork = first_id + fork.index
    return AgentRecord(
        agent.id, agent.parent_id, agent.name, agent.model, agent.status,
        agent.created_at or now, fork, agent.budget,
    )


def resolve_refs(payload: dict, first_id: int) -> dict:
    if not any(isinstance(v, EventRef) for v in payload.values()):
        return payload
    return {k: (first_id + v.index if isinstance(v, EventRef) else v) for k, v in payload.items()}


UPDATABLE = {"status", "model", "name"}  # the agents' columns a batch may update
