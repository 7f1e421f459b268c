"""The event-log contract (core/ports.py): atomic batches, reads, pages, immutability,
ids in commit order, and one feed of every writer's events."""

from __future__ import annotations

import asyncio
import time

import pytest

from ikigai_tui.core.events import AgentRecord, EventRef, WriteBatch
from ikigai_tui.core.ports import ConflictError, StoreError


def agent(agent_id: str, name: str | None = None, parent: str | None = None) -> AgentRecord:
    return AgentRecord(agent_id, parent, name, "offline", "idle", time.time(), None, None)


async def with_agents(backend, *ids: str, db: str = "log"):
    log = await backend.open(db)
    batch = WriteBatch()
    batch.new_agents.extend(agent(i, name=i) for i in ids)
    await log.write(batch)
    return log


async def test_a_batch_is_written_whole_with_consecutive_ids_and_refs_resolved(backend):
    log = await with_agents(backend, "a", "b")
    try:
        batch = WriteBatch()
        first = batch.add("a", "user", {"content": "q"})
        batch.add("a", "assistant", {"content": "r", "reply_to": EventRef(first)})
        batch.add("b", "mail", {"from": "a", "text": "hi"})
        events = await log.write(batch)
        ids = [e.id for e in events]
        assert ids == list(range(ids[0], ids[0] + 3))
        assert events[1].payload["reply_to"] == ids[0]
        assert await log.events() == events
        assert await log.agent_rows("a") == [e.row for e in events[:2]]
        assert await log.agent_rows("a", upto=ids[1]) == [events[0].row]
        assert await log.events("b") == [events[2]]
        assert await log.max_event_id() == ids[-1] and await log.count_events() == 3
        assert await log.unread_counts() == {"b": 1}
    finally:
        await log.close()


async def test_a_refused_batch_writes_nothing_and_says_conflict(backend):
    log = await with_agents(backend, "a")
    try:
        bad = WriteBatch()
        bad.add("a", "user", {"content": "never"})
        bad.add("no-such-agent", "user", {"content": "orphan"})
        with pytest.raises(ConflictError):
            await log.write(bad)
        taken = WriteBatch()
        taken.new_agents.append(agent("other", name="a"))
        with pytest.raises(ConflictError):
            await log.write(taken)
        assert await log.count_events() == 0
        assert [a.id for a in await log.agents()] == ["a"]
        assert issubclass(ConflictError, StoreError)
        await log.append("a", "user", {"content": "fine"})  # still usable
        assert await log.count_events() == 1
    finally:
        await log.close()


async def test_pages_are_in_log_order_before_and_after(backend):
    log = await with_agents(backend, "a")
    try:
        batch = WriteBatch()
        for i in range(10):
            batch.add("a", "user" if i % 2 == 0 else "mark", {"content": str(i)})
        events = await log.write(batch)
        users = [e for e in events if e.kind == "user"]
        assert await log.page("a", ["user"], limit=2) == users[-2:]
        assert await log.page("a", ["user"], before=users[2].id, limit=5) == users[:2]
        assert await log.page("a", ["user"], after=users[0].id, limit=2) == users[1:3]
    finally:
        await log.close()


async def test_committed_events_never_change(backend):
    log = await with_agents(backend, "a")
    try:
        first = await log.write(_pair("a", 0))
        for i in range(1, 20):
            await log.write(_pair("a", i))
        again = await log.events(limit=2)
        assert again == first
        assert (await log.tail(0, limit=2)) == first
    finally:
        await log.close()


def _pair(agent_id: str, i: int, tag: str = "") -> WriteBatch:
    batch = WriteBatch()
    batch.add(agent_id, "user", {"content": f"{tag}question {i}"})
    batch.add(agent_id, "assistant", {"content": f"{tag}answer {i}"})
    return batch


async def test_tail_and_the_feed_see_another_connections_writes_in_id_order_once(backend):
    mine = await with_agents(backend, "a", "b")
    other = await backend.open()
    seen: list = []
    mine.add_commit_hook(lambda events, agents, updates: seen.extend(events))
    try:
        start = await mine.start_feed()
        assert start == await mine.max_event_id()
        theirs = await other.write(_pair("b", 0, "theirs "))
        assert await mine.tail(start) == theirs
        # This connection's own commit delivers the earlier foreign events first.
        ours = await mine.write(_pair("a", 0, "ours "))
        assert [e.id for e in seen] == [e.id for e in theirs + ours]
        more = await other.write(_pair("b", 1, "theirs "))
        deadline = time.monotonic() + 10
        while len(seen) < 6 and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        assert seen == theirs + ours + more
        assert seen == await mine.tail(start)
    finally:
        await other.close()
        await mine.close()


async def test_the_feed_brings_agents_made_elsewhere_and_their_changes(backend):
    mine = await with_agents(backend, "root")
    other = await backend.open()
    got: list = []
    mine.add_commit_hook(lambda events, agents, updates: got.append((events, agents, updates)))
    try:
        await mine.start_feed()
        batch = WriteBatch()
        batch.new_agents.append(agent("kid", name="kid", parent="root"))
        batch.add("kid", "fork", {"parent": "root", "name": "kid"})
        batch.add("kid", "model", {"model": "other-model"})
        batch.add("kid", "kill", {"by": "root"})
        await other.write(batch)
        await mine.catch_up()  # now, or the feed's own follower got there first
        for _ in range(100):
            if got:
                break
            await asyncio.sleep(0.02)
        [(events, agents, updates)] = got  # exactly once, all of it
        assert len(events) == 3
        assert [a.id for a in agents] == ["kid"]
        assert ("kid", "status", "dead") in updates and ("kid", "model", "other-model") in updates
        assert await mine.catch_up() == 0
        assert len(got) == 1
    finally:
        await other.close()
        await mine.close()
