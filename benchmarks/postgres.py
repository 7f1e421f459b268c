"""The event log on PostgreSQL against SQLite (issue 26, Benchmark). benchmarks/run.py prints
these lines after its own figures (`make bench BENCH_ARGS="--only postgres"`: these alone).

Both engines are measured in the same run, on the same log: the 100,000-message agent of
benchmarks/tui.py (one root agent, user and assistant messages alternating), its SQLite
database copied to a temporary folder, and the same agent and events written into a
PostgreSQL database through PgStore.write in batches of 10,000 (the ids are the same:
1..100,000). PostgreSQL is a throwaway server (tests/pg_server.py) started in a temporary
folder with PostgreSQL's own durable defaults (fsync, synchronous_commit and
full_page_writes on: `PgServer(settings=())`, not the test suite's fsync=off), since the
SQLite store commits with synchronous=FULL; loopback TCP, no password. Writing the log
takes about 30 s, so the cluster, once written and cleanly stopped, is cached under
benchmarks/data/ (gitignored; keyed by the SQLite log, the PostgreSQL schema and the
server's version; about 250 MB) and each run starts a copy of it.

  pg_append_vs_sqlite  Committing one user message to the 100,000-event agent through
        the store's write (a single-event batch), PostgreSQL over SQLite: medians of
        APPENDS appends on each (interleaved, alternating which goes first, after WARM
        untimed). Goal: <= 3x.
  pg_replay_vs_sqlite  Reading the agent's 100,000 events as replay does (the store's
        agent_outline, on the store already open), PostgreSQL over SQLite: medians of
        interleaved reads after one untimed read each. The details also give the same
        ratio for agent_rows (every payload decoded). Goal: <= 3x.
  pg_open_vs_sqlite    The full-screen app's first paint and ready (its first refresh,
        the agent's replayer loaded) on the 100,000-message agent, `--db URL` against
        `--db FILE`: benchmarks/tui.py's cold child (tui_drive.py paint), runs of the two
        interleaved after one untimed warm-up each; the figure is the worse of the two
        ratios of medians. Goal: <= 2x.
  pg_live_view_ms      The app (a child process, headless, as tui_drive.py paint runs it)
        shows the 100,000-message agent from PostgreSQL; this process appends LIVE user
        messages to it through its own PgStore, 50-150 ms apart (seeded). Latency: from
        just before the write to the first frame the app draws after its scrollback took
        the message (both clocks CLOCK_MONOTONIC, comparable across processes). Median
        and p99 (nearest rank). Goal: median <= 250 ms and p99 <= 1 s, over loopback.

`--quick` runs fewer repetitions of each; the run exits 0 even when a figure misses.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import os
import random
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gen  # noqa: E402
import tui  # noqa: E402
from figure import fmt, report  # noqa: E402
from figure import main as figures_main  # noqa: E402
from ikigai_tui.core.events import WriteBatch  # noqa: E402
from ikigai_tui.store import open_store  # noqa: E402
from ikigai_tui.store.postgres.schema import MIGRATIONS, SCHEMA_VERSION  # noqa: E402
from tests.pg_server import PgServer  # noqa: E402

perf = time.perf_counter
BIG = tui.BIG
BATCH = 10_000
APPEND_GOAL = REPLAY_GOAL = 3.0
OPEN_GOAL = 2.0
LIVE_MEDIAN_GOAL_MS, LIVE_P99_GOAL_MS = 250.0, 1000.0
WARM = 20
APPENDS, QUICK_APPENDS = 200, 60
REPLAYS, QUICK_REPLAYS = 5, 3
OPENS, QUICK_OPENS = 5, 2
LIVE, QUICK_LIVE = 50, 30
LIVE_MARK = "live-view "


def ratio_line(name: str, value: float, goal: float, details: str) -> str:
    return fmt(name, f"{value:.2f}x", f"<= {goal:g}x", value <= goal, details)


def nearest_rank(values: list[float], share: float) -> float:
    ranked = sorted(values)
    return ranked[max(0, math.ceil(share * len(ranked)) - 1)]


# -- the logs ------------------------------------------------------------------------------


async def load(sqlite_path: Path, url: str) -> float:
    """The SQLite log's one agent and its events written into the PostgreSQL database,
    BATCH events per write: seconds."""
    source = await open_store(sqlite_path, create=False, readonly=True)
    try:
        (record,) = await source.agents()
        rows = await source.agent_rows(record.id)
    finally:
        await source.close()
    t0 = perf()
    target = await open_store(url)
    try:
        for start in range(0, len(rows), BATCH):
            batch = WriteBatch()
            if start == 0:
                batch.new_agents.append(record)
            for _id, kind, payload in rows[start:start + BATCH]:
                batch.add(record.id, kind, payload)
            await target.write(batch)
        count = await target.count_events()
    finally:
        await target.close()
    if count != len(rows):
        raise RuntimeError(f"PostgreSQL holds {count:,} events, SQLite {len(rows):,}")
    return perf() - t0


async def only_agent(sqlite_path: Path) -> str:
    store = await open_store(sqlite_path, create=False, readonly=True)
    try:
        (record,) = await store.agents()
    finally:
        await store.close()
    return record.id


def cluster_cache(server: PgServer, sqlite_cache: Path) -> Path:
    """Where the cluster holding `sqlite_cache`'s log is kept: by that log, the
    PostgreSQL schema and the server's version."""
    version = subprocess.run([str(server.install / "bin" / "postgres"), "--version"],
                             capture_output=True, text=True, check=True).stdout.strip()
    text = json.dumps([SCHEMA_VERSION, MIGRATIONS, version])
    return gen.DATA / f"pg-{sqlite_cache.stem}-p{hashlib.sha256(text.encode()).hexdigest()[:8]}"


def own(server: PgServer, top: Path) -> None:
    """A copied cluster, given to the user the server runs as (nobody, when root)."""
    if server.user is not None:
        for path in [top, *top.rglob("*")]:
            os.chown(path, server.user.pw_uid, server.user.pw_gid, follow_symlinks=False)


def spent_wal(server: PgServer):
    """For copytree: the WAL segments a cleanly stopped cluster does not need (all but the
    one holding its last checkpoint; the others are old or recycled ahead, about 400 MB)."""
    control = subprocess.run([str(server.install / "bin" / "pg_controldata"), "-D",
                              str(server.data)], capture_output=True, text=True, check=True)
    fields = dict(line.split(":", 1) for line in control.stdout.splitlines() if ":" in line)
    if fields["Database cluster state"].strip() != "shut down":
        raise RuntimeError("the cluster was not stopped cleanly: not cached")
    keep = fields["Latest checkpoint's REDO WAL file"].strip()
    return lambda folder, names: [n for n in names if Path(folder).name == "pg_wal"
                                  and len(n) == 24 and n != keep]


def ready_cluster(server: PgServer, sqlite_cache: Path, sqlite_path: Path) -> tuple[str, str]:
    """Start the server on a cluster whose database `bench` holds the log: a copy of the
    cached one, else written now (PgStore.write: about 30 s for 100,000 events) and then
    cached. (its URL, how it was made)."""
    cache = cluster_cache(server, sqlite_cache)
    if cache.is_dir():
        shutil.rmtree(server.data)
        shutil.copytree(cache, server.data, symlinks=True)
        own(server, server.data)
        server.start()
        return server.url("bench"), f"the PostgreSQL cluster copied from {cache.name}"
    server.start()
    url = server.create_database("bench")
    seconds = asyncio.run(load(sqlite_path, url))
    server.stop()  # a clean shutdown: the copy starts without recovery
    for stale in gen.DATA.glob(f"pg-{sqlite_cache.stem}-p*"):
        shutil.rmtree(stale, ignore_errors=True)
    part = cache.with_name(f"{cache.name}.tmp{os.getpid()}")
    shutil.copytree(server.data, part, symlinks=True, ignore=spent_wal(server))
    os.replace(part, cache)
    server.start()
    return url, f"the PostgreSQL log written in {seconds:.1f} s (writes of {BATCH:,}), cached"


# -- append and replay ---------------------------------------------------------------------


async def store_figures(dbs: dict[str, str], agent: str, appends: int,
                        replays: int) -> tuple[dict, list[str]]:
    """Medians per engine: one-event writes, agent_outline and agent_rows of the agent."""
    stores = {name: await open_store(db, create=False) for name, db in dbs.items()}
    problems: list[str] = []
    times: dict[str, dict[str, list[float]]] = {n: {"append": [], "outline": [], "rows": []}
                                                for n in stores}
    try:
        before = {n: await s.count_events() for n, s in stores.items()}
        for i in range(WARM + appends):
            for name in (list(stores) if i % 2 == 0 else list(stores)[::-1]):
                batch = WriteBatch()
                batch.add(agent, "user", {"content": f"append {i}: please look at the failing "
                                                     "test in store.py and tell me why"})
                t0 = perf()
                await stores[name].write(batch)
                if i >= WARM:
                    times[name]["append"].append(perf() - t0)
        for name, store in stores.items():
            grown = await store.count_events() - before[name]
            if grown != WARM + appends:
                problems.append(f"append: {name} grew by {grown} events, not {WARM + appends}")
        expected = before["sqlite"] + WARM + appends
        for r in range(replays + 1):  # the first round is a warm-up
            for name in (list(stores) if r % 2 == 0 else list(stores)[::-1]):
                for how in ("outline", "rows"):
                    read = getattr(stores[name], f"agent_{how}")
                    t0 = perf()
                    got = await read(agent)
                    elapsed = perf() - t0
                    if len(got) != expected:
                        problems.append(f"replay: {name}'s agent_{how} read {len(got):,} "
                                        f"events, not {expected:,}")
                    if r:
                        times[name][how].append(elapsed)
                    del got
    finally:
        for store in stores.values():
            await store.close()
    return ({n: {k: statistics.median(v) for k, v in t.items()} for n, t in times.items()},
            sorted(set(problems)))


# -- open ----------------------------------------------------------------------------------


def open_runs(dbs: dict[str, str], reps: int) -> dict[str, list[dict]]:
    """tui_drive.py paint runs on each database, interleaved after a warm-up of each."""
    tui.compile_package()
    for db in dbs.values():
        tui.child(["paint", "ikigai", db])
    runs: dict[str, list[dict]] = {name: [] for name in dbs}
    for r in range(reps):
        for name in (list(dbs) if r % 2 == 0 else list(dbs)[::-1]):
            runs[name].append(tui.child(["paint", "ikigai", dbs[name]]))
    return runs


def open_line(runs: dict[str, list[dict]]) -> tuple[str, list[str]]:
    problems = [f"open: a {name} run never {what}" for name, rs in runs.items()
                for what, key in (("painted", "paint"), ("got ready", "ready"))
                if any(x[key] is None for x in rs)]
    problems += [f"open: the {name} run showed no messages" for name, rs in runs.items()
                 if any(not x["items"] for x in rs)]
    if problems:
        return "", problems

    def med(name: str, key: str) -> float:
        return statistics.median(x[key] for x in runs[name])

    paint = med("postgres", "paint") / med("sqlite", "paint")
    ready = med("postgres", "ready") / med("sqlite", "ready")
    return ratio_line(
        "pg_open_vs_sqlite", max(paint, ready), OPEN_GOAL,
        f"first paint {paint:.2f}x (PostgreSQL {med('postgres', 'paint') * 1e3:.0f} ms, SQLite "
        f"{med('sqlite', 'paint') * 1e3:.0f} ms), ready {ready:.2f}x ({med('postgres', 'ready') * 1e3:.0f}"
        f" / {med('sqlite', 'ready') * 1e3:.0f} ms), from the top of the child script; "
        f"the worse ratio; cold subprocesses, median of {len(runs['sqlite'])}"), []


# -- live view -----------------------------------------------------------------------------


def live_child(url: str, count: str) -> None:
    """The app on `url`, headless: READY once it has refreshed, then the moments each
    message of LIVE_MARK reached the scrollback and was first drawn after that."""
    from textual.app import App

    from ikigai_tui.runtime import create_app
    from ikigai_tui.tui.app import IkigaiApp
    from ikigai_tui.tui.widgets.scrollback import Scrollback
    from tui_drive import make_config, on_frames, run_headless

    wanted = int(count)
    arrived: dict[int, float] = {}
    shown: dict[int, float] = {}
    ready = asyncio.Event()
    add_items, refresh = Scrollback.add_items, IkigaiApp._refresh

    def added(self, items) -> None:
        add_items(self, items)
        now = perf()
        for item in items:
            if item.text.startswith(LIVE_MARK) and item in self.items:
                arrived.setdefault(int(item.text.split()[1]), now)

    async def refreshed(self) -> None:
        await refresh(self)
        if not ready.is_set():
            ready.set()
            print("READY", flush=True)

    Scrollback.add_items, IkigaiApp._refresh = added, refreshed

    def framed(self) -> None:
        now = perf()
        for n in arrived.keys() - shown.keys():
            shown[n] = now
        if len(shown) >= wanted:
            self.exit()

    on_frames(App, framed)
    app = create_app(make_config(url))
    run_headless(app)
    report({"arrived": arrived, "shown": shown})


async def append_live(url: str, agent: str, count: int) -> dict[int, float]:
    """`count` user messages to the agent, one write each, 50-150 ms apart: the moment
    just before each write."""
    store = await open_store(url, create=False)
    rng = random.Random(26)
    sent: dict[int, float] = {}
    try:
        for n in range(count):
            await asyncio.sleep(rng.uniform(0.05, 0.15))
            batch = WriteBatch()
            batch.add(agent, "user", {"content": f"{LIVE_MARK}{n} from another process"})
            sent[n] = perf()
            await store.write(batch)
    finally:
        await store.close()
    return sent


def live_view(url: str, agent: str, count: int) -> tuple[str, list[str]]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TEXTUAL_THEME")}
    proc = subprocess.Popen([sys.executable, __file__, "--child", url, str(count)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.monotonic() + 120
        while True:
            readable, _, _ = select.select([proc.stdout], [], [], 1)
            if readable:
                text = proc.stdout.readline()
                if text.strip() == "READY":
                    break
                if not text:
                    return "", [f"live view: the app exited before it was ready: "
                                f"{proc.stderr.read().strip()[-500:]}"]
            if time.monotonic() > deadline:
                return "", ["live view: the app was not ready within 120 s"]
        sent = asyncio.run(append_live(url, agent, count))
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    result = next((json.loads(text[7:]) for text in out.splitlines()
                   if text.startswith("RESULT ")), None)
    if result is None:
        return "", [f"live view: no result from the app: {err.strip()[-500:]}"]
    shown = {int(n): t for n, t in result["shown"].items()}
    arrived = {int(n): t for n, t in result["arrived"].items()}
    missing = sorted(set(sent) - set(shown))
    if missing:
        return "", [f"live view: {len(missing)} of {count} messages never shown "
                    f"(first {missing[0]})"]
    latency = [(shown[n] - sent[n]) * 1e3 for n in sent]
    pane = [(arrived[n] - sent[n]) * 1e3 for n in sent]
    median, p99 = statistics.median(latency), nearest_rank(latency, 0.99)
    ok = median <= LIVE_MEDIAN_GOAL_MS and p99 <= LIVE_P99_GOAL_MS
    return fmt(
        "pg_live_view_ms", f"median {median:.0f} ms, p99 {p99:.0f} ms",
        f"median <= {LIVE_MEDIAN_GOAL_MS:g} ms, p99 <= {LIVE_P99_GOAL_MS:g} ms", ok,
        f"another process's write to the frame showing it, {count} appends 50-150 ms apart, "
        f"loopback; to the pane (before its frame) median {statistics.median(pane):.0f} ms; "
        f"worst {max(latency):.0f} ms"), []


# -- the figures ---------------------------------------------------------------------------


def figures(quick: bool = False) -> Iterator[str]:
    problems: list[str] = []
    tmp = Path(tempfile.mkdtemp(prefix="ikigai-bench-pg-"))
    server = PgServer(settings=())  # fsync on: see the docstring
    try:
        sqlite_cache, sqlite_path = tui.ensure_db(BIG), tmp / "big.db"
        shutil.copyfile(sqlite_cache, sqlite_path)
        url, made = ready_cluster(server, sqlite_cache, sqlite_path)
        agent = asyncio.run(only_agent(sqlite_path))
        dbs = {"sqlite": str(sqlite_path), "postgres": url}
        appends = QUICK_APPENDS if quick else APPENDS
        m, found = asyncio.run(store_figures(dbs, agent, appends,
                                             QUICK_REPLAYS if quick else REPLAYS))
        problems += found
        pg, lite = m["postgres"], m["sqlite"]
        yield ratio_line(
            "pg_append_vs_sqlite", pg["append"] / lite["append"], APPEND_GOAL,
            f"PostgreSQL {pg['append'] * 1e3:.2f} ms, SQLite {lite['append'] * 1e3:.2f} ms per "
            f"one-event write to the {BIG:,}-event agent, median of {appends}; fsync on both")
        yield ratio_line(
            "pg_replay_vs_sqlite", pg["outline"] / lite["outline"], REPLAY_GOAL,
            f"agent_outline of {BIG:,} events: PostgreSQL {pg['outline']:.3f} s, SQLite "
            f"{lite['outline']:.3f} s; agent_rows {pg['rows'] / lite['rows']:.2f}x "
            f"({pg['rows']:.3f} / {lite['rows']:.3f} s); median of "
            f"{QUICK_REPLAYS if quick else REPLAYS}; {made}")
        try:
            text, found = open_line(open_runs(dbs, QUICK_OPENS if quick else OPENS))
        except Exception as exc:  # report and go on: the live view still means something
            text, found = "", [f"open figure: {exc}"]
        problems += found
        if text:
            yield text
        text, found = live_view(url, agent, QUICK_LIVE if quick else LIVE)
        problems += found
        if text:
            yield text
    finally:
        server.close()
        shutil.rmtree(tmp, ignore_errors=True)
    for text in problems:
        yield f"CHECK FAILED: {text}"


if __name__ == "__main__":
    figures_main(figures, live_child)
