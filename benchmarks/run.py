"""Benchmarks of opening and appending to big agents. `make bench` runs this.

Each figure is one line, `name: measured (goal) ok|miss   [details]`:

  open_100k_vs_floor    Opening the grandchild of a 3-level lineage whose open reads
                        100,000 rows (fresh Store.open + Session.open, then
                        session.replayer(grandchild)), over the floor: the same rows read
                        by plain SELECTs on an aiosqlite connection and json-decoded.
  open_1m_vs_100k       The same open with 1,000,000 rows, over the 100,000-row open.
  append_100k_vs_empty  Committing one user message to that loaded 100,000-row agent
                        (the commit hook updates its context), over the same commit to
                        the empty root of a fresh database.

Both sides of a ratio are timed in this process, interleaved, after one untimed warm-up
(which also fills the OS cache); each figure is a ratio of medians. The databases are
generated once by benchmarks/gen.py and cached in benchmarks/data/ (gitignored); appends
run on a temporary copy so the cache is never changed. The run exits 0 even when a
figure misses: the report is the product.

  --quick       skip the 1,000,000-row figure
  --profile     also print where the time of one open of the biggest size goes (cProfile)
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import io
import json
import os
import platform
import pstats
import shutil
import sqlite3
import statistics
import sys
import time
from pathlib import Path

import aiosqlite

sys.path.insert(0, str(Path(__file__).resolve().parent))

import gen  # noqa: E402

from ikigai_tui.core.events import WriteBatch  # noqa: E402
from ikigai_tui.core.session import Session, SessionSettings  # noqa: E402
from ikigai_tui.core.store import Store  # noqa: E402
from ikigai_tui.llm.providers import Providers  # noqa: E402

OPEN_GOAL = 2.0
SCALE_GOAL = 11.0
APPEND_GOAL = 1.5
perf = time.perf_counter


def line(name: str, value: float, goal: float, unit_goal: str, details: str) -> str:
    verdict = "ok" if value <= goal else "miss"
    return f"{name}: {value:.2f}x (<= {unit_goal}) {verdict}   [{details}]"


# -- open ------------------------------------------------------------------------------


async def open_once(path: Path, agent: str) -> tuple[float, list[int]]:
    """A fresh open of the agent, as the program does it; returns (seconds, context ids)."""
    gc.collect()
    t0 = perf()
    store = await Store.open(path, create=False)
    session = await Session.open(store, Providers(), SessionSettings(), create_root=False)
    replayer = await session.replayer(agent)
    elapsed = perf() - t0
    ids = list(replayer.ctx)
    await store.close()
    del session, replayer, store
    return elapsed, ids


async def floor_once(path: Path, lineage: list) -> tuple[float, int]:
    """The same rows by plain SELECTs on an aiosqlite connection, json-decoded."""
    gc.collect()
    t0 = perf()
    db = await aiosqlite.connect(path, isolation_level=None)
    loads = json.loads
    decoded = []
    for agent, upto in lineage:
        if upto is None:
            rows = await db.execute_fetchall(
                "SELECT id, kind, payload FROM events WHERE agent_id = ? ORDER BY id", (agent,))
        else:
            rows = await db.execute_fetchall(
                "SELECT id, kind, payload FROM events WHERE agent_id = ? AND id < ? ORDER BY id",
                (agent, upto))
        decoded.append([(i, k, loads(p)) for i, k, p in rows])
    elapsed = perf() - t0
    count = sum(map(len, decoded))
    await db.close()
    del decoded
    return elapsed, count


async def measure_open(info: dict, reps: int) -> dict:
    path = gen.db_path(info["n"])
    grand = info["agents"]["grandchild"]
    lineage = info["lineage"]
    # Warm-up (untimed): fills the OS cache, and checks both sides read what they should.
    _, ids = await open_once(path, grand)
    _, count = await floor_once(path, lineage)
    problems = []
    if count != info["n"]:
        problems.append(f"floor read {count} rows, expected {info['n']}")
    if len(ids) != info["expected_ctx_len"] or gen.ctx_digest(ids) != info["expected_ctx_digest"]:
        problems.append(f"context of {len(ids)} entries differs from the generator's model "
                        f"({info['expected_ctx_len']} entries)")
    opens, floors = [], []
    for rep in range(reps):
        # Alternate which side goes first, so drift does not favour one.
        if rep % 2 == 0:
            opens.append((await open_once(path, grand))[0])
            floors.append((await floor_once(path, lineage))[0])
        else:
            floors.append((await floor_once(path, lineage))[0])
            opens.append((await open_once(path, grand))[0])
    return {"open": statistics.median(opens), "floor": statistics.median(floors),
            "opens": opens, "floors": floors, "ctx": len(ids), "problems": problems}


# -- append ----------------------------------------------------------------------------


async def measure_append(info: dict, count: int, warm: int = 20) -> dict:
    tmp = gen.DATA / f"tmp-append-{os.getpid()}"
    tmp.mkdir(parents=True, exist_ok=True)
    try:
        big_path = tmp / "big.db"
        shutil.copyfile(gen.db_path(info["n"]), big_path)
        big_store = await Store.open(big_path, create=False)
        big = await Session.open(big_store, Providers(), SessionSettings(), create_root=False)
        empty_store = await Store.open(tmp / "empty.db")
        empty = await Session.open(empty_store, Providers(), SessionSettings())
        big_agent = info["agents"]["grandchild"]
        empty_agent = empty.tree.root.id
        big_r = await big.replayer(big_agent)
        empty_r = await empty.replayer(empty_agent)
        assert not empty_r.history, "the empty agent is not empty"
        before = (len(big_r.ctx), len(empty_r.ctx))
        text = "please look at the failing test in store.py and tell me why it fails"

        async def append(session: Session, agent: str) -> float:
            batch = WriteBatch()
            batch.add(agent, "user", {"content": text})
            t0 = perf()
            await session.commit(batch)
            return perf() - t0

        times: dict[str, list[float]] = {"big": [], "empty": []}
        for i in range(warm + count):
            order = [("big", big, big_agent), ("empty", empty, empty_agent)]
            if i % 2:
                order.reverse()
            for key, session, agent in order:
                dt = await append(session, agent)
                if i >= warm:
                    times[key].append(dt)
        after = (len(big_r.ctx), len(empty_r.ctx))
        problems = []
        if after != (before[0] + warm + count, before[1] + warm + count):
            problems.append(f"contexts did not grow by one per append: {before} -> {after}")
        await big_store.close()
        await empty_store.close()
        return {"big": statistics.median(times["big"]), "empty": statistics.median(times["empty"]),
                "problems": problems}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# -- profile ---------------------------------------------------------------------------


def profile_open(info: dict) -> str:
    path = gen.db_path(info["n"])
    prof = cProfile.Profile()
    gc.collect()
    prof.enable()
    asyncio.run(open_once(path, info["agents"]["grandchild"]))
    prof.disable()
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out).sort_stats("tottime")
    stats.print_stats(12)
    return out.getvalue()


# -- main ------------------------------------------------------------------------------


def cpu_name() -> str:
    try:
        for text in Path("/proc/cpuinfo").read_text().splitlines():
            if text.startswith("model name"):
                return text.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def describe(info: dict) -> str:
    r = info["rows_read"]
    return (f"data {info['n']:,}: rows read root {r['root']:,} + child {r['child']:,} + "
            f"grandchild {r['grandchild']:,}; {info['total_rows']:,} rows in db; "
            f"avg payload {info['avg_payload_bytes']} B; context {info['expected_ctx_len']:,} entries")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="skip the 1,000,000-row figure")
    parser.add_argument("--profile", action="store_true", help="cProfile one open of the biggest size")
    parser.add_argument("--reps-100k", type=int, default=5)
    parser.add_argument("--reps-1m", type=int, default=3)
    parser.add_argument("--appends", type=int, default=200)
    args = parser.parse_args()

    start = perf()
    print(f"ikigai-tui bench: {cpu_name()}, {os.cpu_count()} cores, {platform.system()} "
          f"{platform.release()}; Python {platform.python_version()}, SQLite "
          f"{sqlite3.sqlite_version}, aiosqlite {aiosqlite.__version__}", flush=True)
    small = gen.ensure(100_000)
    large = None if args.quick else gen.ensure(1_000_000)
    for info in filter(None, (small, large)):
        print(describe(info), flush=True)

    problems: list[str] = []
    lines: list[str] = []

    async def run() -> None:
        m100 = await measure_open(small, args.reps_100k)
        problems.extend(m100["problems"])
        lines.append(line(
            "open_100k_vs_floor", m100["open"] / m100["floor"], OPEN_GOAL, f"{OPEN_GOAL}x",
            f"open {m100['open']:.3f} s, floor {m100['floor']:.3f} s, median of {args.reps_100k}"))
        if large is not None:
            m1m = await measure_open(large, args.reps_1m)
            problems.extend(m1m["problems"])
            lines.append(line(
                "open_1m_vs_100k", m1m["open"] / m100["open"], SCALE_GOAL, f"{SCALE_GOAL:g}x",
                f"open 1m {m1m['open']:.3f} s, open 100k {m100['open']:.3f} s; 1m floor "
                f"{m1m['floor']:.3f} s, open/floor {m1m['open'] / m1m['floor']:.2f}x; "
                f"median of {args.reps_1m}"))
        app = await measure_append(small, args.appends)
        problems.extend(app["problems"])
        lines.append(line(
            "append_100k_vs_empty", app["big"] / app["empty"], APPEND_GOAL, f"{APPEND_GOAL}x",
            f"100k {app['big'] * 1e3:.3f} ms, empty {app['empty'] * 1e3:.3f} ms, "
            f"median of {args.appends}"))

    asyncio.run(run())
    for text in lines:
        print(text)
    for text in problems:
        print(f"CHECK FAILED: {text}")
    if args.profile:
        print(f"\nprofile of one open ({(large or small)['n']:,} rows), top functions by own time:")
        print(profile_open(large or small))
    print(f"total {perf() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
