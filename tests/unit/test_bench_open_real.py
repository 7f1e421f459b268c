"""benchmarks/open_real.py, by which `make bench` opens logs as a user does (issue 23,
item 17): the real program in a pseudo-terminal, read from outside. What it reads off the
screen, and one open of a small log from start to quit."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))

import open_real  # noqa: E402

from ikigai_tui.core.events import AgentRecord, WriteBatch  # noqa: E402
from ikigai_tui.store.sqlite.store import Store  # noqa: E402


def test_the_screen_text_is_the_output_without_its_escape_sequences():
    raw = (b"\x1b[?1049h\x1b[1;1H\x1b[38;2;10;20;30mSent: \x1b[0m\x1b[2m12.3K of 100K"
           b"\x1b]8;id=1;https://example.com\x1b\\link\x1b]8;;\x1b\\\x1b[?2026l")
    assert open_real.screen_text(raw) == b"Sent: 12.3K of 100Klink"


@pytest.mark.parametrize("exact", [True, False])
def test_ready_is_a_count_in_the_gauge_exact_unless_the_model_estimates(exact):
    counted = open_real.COUNTED[exact]
    assert counted.search(b"| Sent: 12.3K of 100K window")
    assert not counted.search("Sent: …".encode())  # still loading
    assert bool(counted.search(b"Sent: ~12.3K of 100K window")) is not exact


async def _small_log(path: Path, model: str) -> None:
    store = await Store.open(path)
    batch = WriteBatch()
    batch.new_agents.append(AgentRecord("root", None, "root", model, "idle", time.time(), None))
    for i in range(20):
        batch.add("root", "user" if i % 2 == 0 else "assistant", {"content": f"message {i}"})
    batch.add("root", "assistant", {"content": "the conversation finishes wonderfully"})
    await store.write(batch)
    await store.close()


def test_last_words_are_long_words_from_the_end_of_the_last_message(tmp_path):
    asyncio.run(_small_log(tmp_path / "a.db", "offline"))
    assert open_real.last_words(tmp_path / "a.db") == [b"wonderfully", b"finishes", b"conversation"]


def test_an_open_of_the_real_program_is_read_from_outside(tmp_path):
    db = tmp_path / "a.db"
    asyncio.run(_small_log(db, "offline"))
    result = open_real.open_once(db, "offline", "http://127.0.0.1:9/v1", tmp_path, timeout=60)
    assert result.get("tail") is None
    assert result["spawned"] < result["start"] < result["paint"] <= result["ready"] < result["quit"]
    assert result["rss"] > 10
    assert 0.0 <= result["stall_before_paint_ms"] <= result["stall_ms"]
    assert result["stall_after_paint_ms"] <= result["stall_ms"]
    assert result["litellm"] is False  # the offline model never loads it
    assert not list(tmp_path.glob("stalls-*.json"))  # the probe's file is read and removed


def test_run_only_refuses_an_unknown_module():
    done = subprocess.run([sys.executable, str(BENCH / "run.py"), "--only", "open_stall,nope"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "no figures module nope" in done.stderr
