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
generated once by benchmarks/gen.py (in a child process) and cached in benchmarks/data/
(gitignored), keyed by size, generator version and schema; appends
run on a temporary copy so the cache is never changed. The run exits 0 even when a
figure misses: the report is the product.

  --quick       skip the 1,000,000-row figure
  --profile     also print where the time of one open of the biggest size goes (cProfile)
  --only M[,M]  only the figures of these modules (e.g. open_stall), not the ones above:
                `make bench BENCH_ARGS="--only open_stall"`
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
import subprocess
import sys
import time
from pathlib import Path

import aiosqlite

sys.path.insert(0, str(Path(__file__).resolve().parent))

import big_message  # noqa: E402
import compact  # noqa: E402
import feed  # noqa: E402
import files  # noqa: E402
from figure import fmt  # noqa: E402
import forget  # noqa: E402
import gen  # noqa: E402
import matching  # noqa: E402
import mcp_calls  # noqa: E402
import find  # noqa: E402
import open_stall  # noqa: E402
import preview  # noqa: E402
import postgres  # noqa: E402
import pruned  # noqa: E402
import stall_figures  # noqa: E402
import tools  # noqa: E402
import window  # noqa: E402
import tui  # noqa: E402
import workbench  # noqa: E402

from ikigai_tui.core.events import WriteBatch  # noqa: E402
from ikigai_tui.core.session import Session, SessionSettings  # noqa: E402
from ikigai_tui.store.sqlite.store import Store  # noqa: E402
from ikigai_tui.core.matching import embedder as embedders  # noqa: E402
from ikigai_tui.embed import default_embedder  # noqa: E402

embedders.use(default_embedder)  # sessions opened here match as the program's do
from ikigai_tui.llm.providers import Providers  # noqa: E402

# The modules whose figures follow this file's own, in this order.
MODULES = (window, tui, open_stall, stall_figures, workbench, find, big_message, feed, preview,
           forget, matching, compact, pruned, files, tools, mcp_calls, postgres)
OPEN_GOAL = 2.0
SCALE_GOAL = 11.0
APPEND_GOAL = 1.5
perf = time.perf_counter


def line(name: str, value: float, goal: float, unit_goal: str, details: str) -> str:
    return fmt(name, f"{value:.2f}x", f"<= {unit_goal}", value <= goal, details)


# -- open ------------------------------------------------------------------------------


class GcClock:
    """Time spent in the cyclic garbage collector while `on`."""

    def __init__(self) -> None:
        self.on = False
        self.total = 0.0
        self._start = 0.0
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, info: dict) -> None:
        if not self.on:
            return
        if phase == "start":
            self._start = perf()
        else:
            self.total += perf() - self._start

    def start(self) -> None:
        self.total, self.on = 0.0, True

    def stop(self) -> float:
        self.on = False
        return self.total


GC = GcClock()


async def open_once(path: Path, agent: str) -> tuple[float, float, list[int]]:
    """A fresh open of the agent, as the program does it: (seconds, gc seconds, context ids)."""
    gc.collect()
    GC.start()
    t0 = perf()
    store = await Store.open(path, create=False)
    session = await Session.open(store, Providers(), SessionSettings(), create_root=False)
    replayer = await session.replayer(agent)
    elapsed = perf() - t0
    in_gc = GC.stop()
    ids = list(replayer.ctx)
    await store.close()
    del session, replayer, store
    return elapsed, in_gc, ids


async def floor_once(path: Path, lineage: list) -> tuple[float, float, int]:
    """The same rows by plain SELECTs on an aiosqlite connection, json-decoded.

    With the cyclic collector paused, as the program's own load does: the floor is the
    best a plain read can do, so the ratio measures replay, not a GC setting."""
    gc.collect()
    GC.start()
    gc.disable()
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
    gc.enable()
    in_gc = GC.stop()
    count = sum(map(len, decoded))
    await db.close()
    del decoded
    return elapsed, in_gc, count


async def warm_and_check(info: dict) -> list[str]:
    """Untimed: fills the OS cache, and checks both sides read what they should."""
    path = gen.db_path(info["n"])
    _, _, ids = await open_once(path, info["agents"]["grandchild"])
    _, _, count = await floor_once(path, info["lineage"])
    problems = []
    if count != info["n"]:
        problems.append(f"floor read {count} rows, expected {info['n']}")
    if len(ids) != info["expected_ctx_len"] or gen.ctx_digest(ids) != info["expected_ctx_digest"]:
        problems.append(f"{info['n']:,}: context of {len(ids)} entries differs from the "
                        f"generator's model ({info['expected_ctx_len']} entries)")
    return problems


async def measure_opens(plan: list[tuple[dict, int]]) -> dict[int, dict]:
    """Open and floor of each size, all interleaved: every round runs one open/floor pair
    per size still due (alternating which side goes first), the fewer repetitions of a
    size spread evenly over the rounds."""
    rounds = max(reps for _, reps in plan)
    samples = {info["n"]: {"open": [], "floor": [], "open_gc": [], "floor_gc": []}
               for info, _ in plan}
    for r in range(rounds):
        for info, reps in plan:
            due = {round(k * rounds / reps) for k in range(reps)}
            if r not in due:
                continue
            path, s = gen.db_path(info["n"]), samples[info["n"]]
            sides = ["open", "floor"] if r % 2 == 0 else ["floor", "open"]
            for side in sides:
                if side == "open":
                    t, g, _ = await open_once(path, info["agents"]["grandchild"])
                else:
                    t, g, _ = await floor_once(path, info["lineage"])
                s[side].append(t)
                s[side + "_gc"].append(g)
    return {n: {k: statistics.median(v) for k, v in s.items()} | {"reps": len(s["open"])}
            for n, s in samples.items()}


# -- append ----------------------------------------------------------------------------


async def measure_append(info: dict, count: int, warm: int = 20) -> dict:
    """Median time of committing one user message: to the loaded 100,000-row agent (on a
    copy of the cached database) and to the empty root of a fresh database, interleaved."""
    tmp = gen.DATA / f"tmp-append-{os.getpid()}"
    tmp.mkdir(parents=True, exist_ok=True)
    stores: list[Store] = []
    try:
        big_path = tmp / "big.db"
        shutil.copyfile(gen.db_path(info["n"]), big_path)
        stores.append(await Store.open(big_path, create=False))
        big = await Session.open(stores[-1], Providers(), SessionSettings(), create_root=False)
        stores.append(await Store.open(tmp / "empty.db"))
        empty = await Session.open(stores[-1], Providers(), SessionSettings())
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
            await session.commit(batch)  # the commit hook applies it to the loaded replayer
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
        return {"big": statistics.median(times["big"]), "empty": statistics.median(times["empty"]),
                "count": count, "problems": problems}
    finally:
        for store in stores:
            await store.close()
        shutil.rmtree(tmp, ignore_errors=True)


# -- profile ---------------------------------------------------------------------------


def profile_open(info: dict) -> str:
    path = gen.db_path(info["n"])
    prof = cProfile.Profile()
    gc.collect()
    prof.enable()
    asyncio.run(open_once(path, info["agents"]["grandchild"]))  # gc.collect() runs first
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


def ensure(n: int) -> dict:
    """The cached database of size n; generated in a child process when missing, so that
    what generation leaves in this process's heap cannot skew the timings."""
    if not (gen.db_path(n).exists() and gen.meta_path(n).exists()):
        subprocess.run([sys.executable, str(Path(gen.__file__)), str(n)], check=True)
    return json.loads(gen.meta_path(n).read_text())


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
    parser.add_argument("--only", type=lambda text: text.split(","), default=None,
                        help=f"only these modules' figures: {', '.join(m.__name__ for m in MODULES)}")
    args = parser.parse_args()
    modules = MODULES
    if args.only:
        by_name = {m.__name__: m for m in MODULES}
        unknown = [name for name in args.only if name not in by_name]
        if unknown:
            parser.error(f"no figures module {', '.join(unknown)}: one of {', '.join(by_name)}")
        modules = tuple(by_name[name] for name in args.only)

    start = perf()
    print(f"ikigai-tui bench: {cpu_name()}, {os.cpu_count()} cores, {platform.system()} "
          f"{platform.release()}; Python {platform.python_version()}, SQLite "
          f"{sqlite3.sqlite_version}, aiosqlite {aiosqlite.__version__}", flush=True)
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    problems: list[str] = []
    lines: list[str] = []
    if args.only:
        for module in modules:
            for text in module.figures(quick=args.quick):
                print(text, flush=True)
        print(f"total {perf() - start:.0f} s")
        return 0
    small = ensure(100_000)
    large = None if args.quick else ensure(1_000_000)
    for info in filter(None, (small, large)):
        print(describe(info), flush=True)

    async def run() -> None:
        plan = [(small, args.reps_100k)] + ([(large, args.reps_1m)] if large else [])
        for info, _ in plan:
            problems.extend(await warm_and_check(info))
        m = await measure_opens(plan)
        a = m[small["n"]]
        lines.append(line(
            "open_100k_vs_floor", a["open"] / a["floor"], OPEN_GOAL, f"{OPEN_GOAL}x",
            f"open {a['open']:.3f} s, floor {a['floor']:.3f} s; in gc {a['open_gc']:.3f} s "
            f"/ {a['floor_gc']:.3f} s; median of {a['reps']}"))
        if large is not None:
            b = m[large["n"]]
            lines.append(line(
                "open_1m_vs_100k", b["open"] / a["open"], SCALE_GOAL, f"{SCALE_GOAL:g}x",
                f"open 1m {b['open']:.3f} s, open 100k {a['open']:.3f} s; floor 1m/100k "
                f"{b['floor'] / a['floor']:.2f}x, 1m open/floor {b['open'] / b['floor']:.2f}x; "
                f"in gc 1m open {b['open_gc']:.3f} s, floor {b['floor_gc']:.3f} s; "
                f"median of {b['reps']}"))
        app = await measure_append(small, args.appends)
        problems.extend(app["problems"])
        lines.append(line(
            "append_100k_vs_empty", app["big"] / app["empty"], APPEND_GOAL, f"{APPEND_GOAL}x",
            f"100k {app['big'] * 1e3:.3f} ms, empty {app['empty'] * 1e3:.3f} ms, "
            f"median of {app['count']}"))

    asyncio.run(run())
    for text in lines:
        print(text)
    # Each module of figures prints its lines as they are measured, in this order.
    for module in modules:
        for text in module.figures(quick=args.quick):
            print(text, flush=True)
    for text in problems:
        print(f"CHECK FAILED: {text}")
    if args.profile:
        print(f"\nprofile of one open ({(large or small)['n']:,} rows), top functions by own time:")
        print(profile_open(large or small))
    print(f"total {perf() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
