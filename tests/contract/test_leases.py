"""Leases on agents (SmallState): one holder at a time, a dead or silent holder is
taken over, never waited on."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from tests.contract.test_event_log import with_agents

HOST = "this-host"


@pytest.fixture
async def log(backend):
    store = await with_agents(backend, "a", "b")
    yield store
    await store.close()


async def test_one_holder_at_a_time_and_release_frees_it(log):
    me = os.getpid()
    assert await log.acquire_lease("a", me, HOST) is None
    assert await log.acquire_lease("a", me, HOST) is None  # the holder renews, re-enters
    held = await log.acquire_lease("a", me, "elsewhere")
    assert held is not None and (held.pid, held.host) == (me, HOST)
    assert await log.acquire_lease("b", me, "elsewhere") is None  # another agent: free
    await log.release_lease("a", 12345, HOST)  # not the holder: nothing happens
    assert await log.acquire_lease("a", me, "elsewhere") is not None
    await log.release_lease("a", me, HOST)
    assert await log.acquire_lease("a", me, "elsewhere") is None


async def test_a_holder_whose_process_is_gone_is_taken_over(log):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    assert await log.acquire_lease("a", gone.pid, HOST) is None
    assert await log.acquire_lease("a", os.getpid(), HOST) is None


async def test_a_holder_that_stopped_renewing_is_taken_over(log, monkeypatch):
    from ikigai_tui.core import leases  # the policy any store applies

    assert await log.acquire_lease("a", 1, "far-away") is None
    assert await log.acquire_lease("a", 2, HOST) is not None
    await log.renew_leases(["a"], 1, "far-away")
    real = time.time
    monkeypatch.setattr(leases.time, "time", lambda: real() + leases.STALE + 1)
    assert await log.acquire_lease("a", 2, HOST) is None
