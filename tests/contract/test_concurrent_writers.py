"""Ids in commit order under concurrent writers in several processes: every writer sees
its own ids increase in the order its commits return, no id is given twice, and one
reader's feed sees every event of every writer exactly once, in id order, no gaps."""

from __future__ import annotations

import asyncio
import time

import pytest

from ikigai_tui.core.events import WriteBatch
from tests.contract.test_event_log import with_agents


@pytest.mark.serial  # it checks the writers overlapped in time: a busy neighbour can keep them apart
async def test_two_processes_and_this_one_writing_at_once(backend, tmp_path):
    mine = await with_agents(backend, "a")
    seen: list = []
    mine.add_commit_hook(lambda events, agents, updates: seen.extend(events))
    go = tmp_path / "go"
    procs = []
    try:
        start = await mine.start_feed()
        for tag in ("P", "Q"):
            procs.append(await asyncio.create_subprocess_exec(
                *backend.appender("log", "batches", tag, "--agent", "a", "--writers", "2",
                                  "--count", "15", "--go", str(go), "--pause", "0.002"),
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE))
        for proc in procs:
            assert await proc.stdout.readline() == b"READY\n"
        go.touch()
        own_ids: list[int] = []
        for i in range(20):
            batch = WriteBatch()
            batch.add("a", "user", {"content": f"local {i}"})
            own_ids += [e.id for e in await mine.write(batch)]
            await asyncio.sleep(0.003)
        reported: dict[str, list[int]] = {}
        for tag, proc in zip(("P", "Q"), procs):
            out, err = await proc.communicate()
            assert proc.returncode == 0, err.decode()[-2000:]
            reported[tag] = [int(line.split()[1]) for line in out.decode().splitlines()
                             if line.startswith("C ")]
        deadline = time.monotonic() + 10
        while len(seen) < 20 + 2 * 2 * 2 * 15 and time.monotonic() < deadline:
            await mine.catch_up()
            await asyncio.sleep(0.01)
        everything = await mine.tail(start)
        ids = [e.id for e in everything]
        assert ids == list(range(start + 1, start + 1 + len(ids))), "a gap or a repeat"
        assert len(ids) == 20 + 2 * 2 * 2 * 15
        assert seen == everything, "the feed missed, repeated or reordered events"
        assert own_ids == sorted(own_ids)
        for tag in ("P", "Q"):
            assert len(reported[tag]) == 2 * 2 * 15
            assert set(reported[tag]) <= set(ids)
        assert not set(reported["P"]) & set(reported["Q"]) and not set(own_ids) & set(reported["P"])
        # The writers really overlapped.
        assert min(reported["P"]) < max(own_ids) and min(own_ids) < max(reported["Q"])
    finally:
        for proc in procs:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
        await mine.close()
