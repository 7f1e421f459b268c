"""The SQLite change feed's pace: it looks often while the log changes and backs off when
it is idle (an open, idle session costs a quarter of the wake-ups), without another
writer's append taking longer than a second to show; any change brings it back."""

from __future__ import annotations

import asyncio
import time

import pytest

from ikigai_tui.core.events import AgentRecord, WriteBatch
from ikigai_tui.store.sqlite import feed
from ikigai_tui.store.sqlite.feed import FALLBACK_SECONDS, IDLE_POLL_INTERVAL, POLL_INTERVAL, Pace
from ikigai_tui.store.sqlite.store import Store


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_pace_is_fast_until_the_log_has_been_quiet_then_slow_until_it_changes():
    clock = Clock()
    pace = Pace(clock=clock)
    assert pace.interval() == POLL_INTERVAL
    clock.now += feed.IDLE_AFTER - 0.01
    assert pace.interval() == POLL_INTERVAL
    clock.now += 0.02
    assert pace.interval() == IDLE_POLL_INTERVAL
    pace.changed()
    assert pace.interval() == POLL_INTERVAL
    # Backing off never makes a look rarer than the once-a-second question to SQLite.
    assert POLL_INTERVAL < IDLE_POLL_INTERVAL <= FALLBACK_SECONDS / 4
    assert Pace(fast=0.5).interval() == 0.5 and Pace(fast=0.5, clock=clock).slow == 0.5


async def _open(path, *agents: str) -> Store:
    store = await Store.open(path)
    if agents:
        batch = WriteBatch()
        batch.new_agents.extend(AgentRecord(a, None, a, "offline", "idle", time.time(), None, None)
                                for a in agents)
        await store.write(batch)
    return store


async def _looks_during(monkeypatch, seconds: float) -> int:
    """How many times the poller looks at the write-ahead log in `seconds`."""
    count = 0
    real = feed.wal_signature

    def counting(path):
        nonlocal count
        count += 1
        return real(path)

    monkeypatch.setattr(feed, "wal_signature", counting)
    await asyncio.sleep(seconds)
    monkeypatch.setattr(feed, "wal_signature", real)
    return count


@pytest.mark.serial  # counts the feed's looks in wall-clock spells, shown within 1 s
async def test_an_idle_feed_looks_less_often_and_still_shows_another_writers_append(
        tmp_path, monkeypatch):
    db = tmp_path / "pace.db"
    mine = await _open(db, "a")
    other = await _open(db)
    seen: list = []
    mine.add_commit_hook(lambda events, agents, updates: seen.extend(events))
    try:
        await mine.start_feed()
        pace = mine._pace
        pace.idle_after = 0.3  # the test's quiet spell, instead of seconds
        busy = await _looks_during(monkeypatch, 0.5)  # 0.3 s fast, then slow
        assert pace.interval() == IDLE_POLL_INTERVAL
        idle = await _looks_during(monkeypatch, 1.0)
        # Fast would be about 1.0 / POLL_INTERVAL = 20 looks (a loaded machine: fewer).
        assert idle <= 1.0 / IDLE_POLL_INTERVAL + 2, (busy, idle)

        written = await other.append("a", "user", {"content": "after a quiet spell"})
        start = time.monotonic()
        while written not in seen:
            assert time.monotonic() - start < FALLBACK_SECONDS, "not shown within a second"
            await asyncio.sleep(0.01)
        assert pace.interval() == POLL_INTERVAL  # a change: fast again

        await asyncio.sleep(0.4)
        assert pace.interval() == IDLE_POLL_INTERVAL
        await mine.append("a", "user", {"content": "my own"})
        assert pace.interval() == POLL_INTERVAL  # this process's commit counts too
    finally:
        await other.close()
        await mine.close()
