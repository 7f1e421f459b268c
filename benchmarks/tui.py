"""Benchmarks of the full-screen app (Textual). benchmarks/run.py prints these lines after
its own figures.

  first_paint_100k_vs_empty     Time to first paint of the app on a database whose root
                                agent (focused at start) holds 100,000 messages, over the
                                same on a database whose root holds none.
  scroll_100k_median_ms         Keypress to repaint with those 100,000 messages open at
                                120x40: page up (repeated), ctrl+home, ctrl+end.
  stream_10k_last_vs_first      Streaming a 10,000-chunk reply into the scrollback (each
                                chunk the session's StreamDelta notice, which reaches the
                                pane as a message, as in the program): the per-chunk cost
                                (notice + stream + paint) of the last 1,000 chunks over
                                that of the first 1,000.
  cold_start_vs_minimal_textual Time to first paint of the app on the empty database over
                                that of a minimal Textual app (one Static), started the
                                same way. Also checks litellm is not imported at start-up.
  memory_100k_mb                Resident memory (VmRSS) of the app with the 100,000
                                messages open, after first paint and the scroll figure.

Everything runs in child processes of this one (`python benchmarks/tui_drive.py MODE ...`,
which holds the drivers), so neither this process's heap nor its imports touch the figures;
each child is a cold interpreter. Start-up figures: each run records time.perf_counter() at
the top of tui_drive.py (before textual or ikigai_tui is imported) and the moment of first
paint; the runs of
the three kinds (100k, empty, minimal) are interleaved, after one untimed warm-up of each,
and the figures are ratios of medians. Both apps run headless at 120x40; since the
headless driver skips writing the frame to a terminal, every frame's escape sequences are
still generated (CompositorUpdate.render_segments) so that cost is counted as well.

"First paint" of the app: the first frame, once the scrollback holds its latest page
(Scrollback.loaded; the app reads it before the screen is composed), in which
Scrollback.render_line ran with the page laid out at the widget's real width (the frames
before it are counted in the details). Of
the minimal app: the first frame in which its Static was rendered. The app also gets its
first session refresh (gauge, tree, titles: the focused agent's replayer is loaded by
then) before the child exits: the details show that as "ready", litellm is checked at both
moments, and a check fails when the 100k agent is not shown at its newest message.

The databases (one root agent, "offline" model; user/assistant messages alternating, with
realistic lengths and some Markdown) are written through Store.write in batches of 10,000,
cached under benchmarks/data/ (gitignored) keyed by size, TUI_GEN_VERSION and the schema,
and copied to a temporary folder for each run so the cache is never changed. A missing
database is generated in a child process (`python benchmarks/tui.py gen N PATH`).
"""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import gen
from figure import fmt, run_child
from figure import main as figures_main
from ikigai_tui.core.events import AgentRecord, WriteBatch
from ikigai_tui.store.sqlite.store import Store

perf = time.perf_counter
HERE = Path(__file__).resolve().parent
DRIVER = HERE / "tui_drive.py"
TUI_GEN_VERSION = 1
BIG = 100_000
BATCH = 10_000

PAINT_GOAL = 1.5
SCROLL_GOAL_MS = 50.0
STREAM_GOAL = 1.5
COLD_GOAL = 1.5
MEMORY_GOAL_MB = 250.0


# -- data (parent side) ------------------------------------------------------------------


def db_path(n: int) -> Path:
    return gen.DATA / f"tui-{n}-v{TUI_GEN_VERSION}-s{gen.schema_tag()}.db"


def ensure_db(n: int) -> Path:
    """The cached database of n messages; generated in a child process when missing."""
    return ensure_cached(db_path(n), f"tui-{n}-v*", f"the TUI database of {n:,} messages",
                         [__file__, "gen", str(n)])


def ensure_cached(path: Path, versions: str, what: str, argv: list[str]) -> Path:
    """The cached database `path`; when missing, its other versions (the glob `versions`
    in benchmarks/data/) go and `python argv... PATH` writes it, in a child process."""
    if path.exists():
        return path
    gen.DATA.mkdir(parents=True, exist_ok=True)
    for stale in gen.DATA.glob(versions):
        if not stale.name.startswith(path.stem):
            stale.unlink()
    print(f"generating {what} -> {path.relative_to(HERE.parent)} ...", flush=True)
    subprocess.run([sys.executable, *argv, str(path)], check=True)
    return path


class Texts:
    """Messages of realistic, varied lengths; replies with paragraphs, lists and code."""

    def __init__(self, rng: random.Random) -> None:
        words = gen.vocabulary(rng)
        self.rng = rng

        def sentence_run(mean: int) -> str:
            return gen.run_of_words(rng, words, mean)

        def reply() -> str:
            parts = [sentence_run(250) for _ in range(rng.randint(1, 3))]
            if rng.random() < 0.25:
                parts.append("\n".join(f"- {sentence_run(40)}" for _ in range(rng.randint(2, 5))))
            if rng.random() < 0.15:
                code = "\n".join(f"    {sentence_run(30)}" for _ in range(rng.randint(2, 8)))
                parts.append(f"```python\ndef f(x):\n{code}\n```")
            return "\n\n".join(parts)

        self.user = [sentence_run(150) for _ in range(2000)]
        self.assistant = [reply() for _ in range(2000)]

    def pick(self, pool: list[str]) -> str:
        return pool[self.rng.randrange(len(pool))]


async def _generate(n: int, path: Path, seed: int = 20240602) -> None:
    rng = random.Random(seed)
    texts = Texts(rng)
    store = await Store.open(path)
    try:
        root = f"{rng.getrandbits(128):032x}"
        batch = WriteBatch()
        batch.new_agents.append(AgentRecord(root, None, "root", "offline", "idle", time.time(),
                                            None, 100_000))
        for i in range(n):
            if i % 2 == 0:
                batch.add(root, "user", {"content": texts.pick(texts.user)})
            else:
                batch.add(root, "assistant", {"content": texts.pick(texts.assistant)})
            if len(batch.events) >= BATCH:
                await store.write(batch)
                batch = WriteBatch()
        if batch.events or batch.new_agents:
            await store.write(batch)
        assert await store.count_events() == n
        await store._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        await store.close()


def generate(n: int, path: Path) -> None:
    write_cached(path, lambda tmp: _generate(n, tmp))


def write_cached(path: Path, write) -> None:
    """`write(tmp)` (a coroutine) fills a temporary file, which then becomes `path`."""
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    for p in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
        p.unlink(missing_ok=True)
    t0 = perf()
    asyncio.run(write(tmp))
    for suffix in ("-wal", "-shm"):
        Path(f"{tmp}{suffix}").unlink(missing_ok=True)
    os.replace(tmp, path)
    print(f"  done in {perf() - t0:.1f} s", flush=True)


# -- the parent ----------------------------------------------------------------------------


def child(args: list[str], timeout: float = 600) -> dict:
    """A run of the driver (DRIVER, tui_drive.py): its RESULT; raises when there is none."""
    spawned = perf()
    result, failed = run_child([str(DRIVER), *args], timeout)
    if result is None:
        raise RuntimeError(f"{' '.join(args[:2])} {failed}")
    if "t0" in result:  # perf_counter is CLOCK_MONOTONIC: comparable across processes
        result["interpreter"] = result["t0"] - spawned
    return result


def compile_package() -> None:
    """As installed (make install does the same): the package byte-compiled, like textual
    in site-packages, even where PYTHONDONTWRITEBYTECODE stops Python writing caches."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(HERE.parent / "ikigai_tui")],
                   check=True)


def startup(dbs: dict[str, Path], reps: int) -> tuple[list[str], list[str]]:
    """Figures 1 and 4: runs of the three kinds interleaved, order rotating per round."""
    kinds = {"big": ["paint", "ikigai", str(dbs["big"])],
             "empty": ["paint", "ikigai", str(dbs["empty"])],
             "minimal": ["paint", "minimal"]}
    names = list(kinds)
    compile_package()
    for name in names:  # warm-up: the OS cache
        child(kinds[name])
    runs: dict[str, list[dict]] = {name: [] for name in names}
    for r in range(reps):
        order = names[r % 3:] + names[:r % 3]
        for name in order:
            runs[name].append(child(kinds[name]))
    problems = []
    for name, results in runs.items():
        if any(x["paint"] is None for x in results):
            problems.append(f"first paint: a '{name}' run never painted")
        if name != "minimal" and any(x["ready"] is None for x in results):
            problems.append(f"first paint: a '{name}' run never finished its first refresh")
        if name != "minimal" and any(x["litellm_at_paint"] or x["litellm_at_ready"] for x in results):
            problems.append(f"litellm is imported at start-up ({name} database)")
    if any(not x["items"] for x in runs["big"]):
        problems.append("first paint: the 100k scrollback showed no items")
    if any(x["items"] for x in runs["empty"]):
        problems.append("first paint: the empty scrollback showed items")
    off_end = [x["view"] for x in runs["big"] if x["view"] and x["view"][0] < x["view"][1]]
    if off_end:
        y, top = off_end[0]
        problems.append(
            f"first paint: the 100k agent does not open at its newest message: after the first "
            f"refresh the view is at line {y:.0f} of {top} (the top of the loaded page) in "
            f"{len(off_end)} of {len(runs['big'])} runs")

    def med(name: str, key: str) -> float:
        return statistics.median(x[key] for x in runs[name] if x[key] is not None)

    big, empty, minimal = med("big", "paint"), med("empty", "paint"), med("minimal", "paint")
    interp = statistics.median(x["interpreter"] for rs in runs.values() for x in rs)
    ratio = big / empty
    early = [x["flash"] for x in runs["big"] if x.get("flash") is not None]
    flash = (f"; {len(early)} of {reps} 100k runs first drew the page before its real width was "
             f"known (wrapped at 10 columns, median {statistics.median(early) * 1e3:.0f} ms)"
             if early else "")
    lines = [fmt(
        "first_paint_100k_vs_empty", f"{ratio:.2f}x", f"<= {PAINT_GOAL:g}x", ratio <= PAINT_GOAL,
        f"100k {big * 1e3:.0f} ms, empty {empty * 1e3:.0f} ms to first paint (from the top of "
        f"the script; + {interp * 1e3:.0f} ms interpreter start); ready (first refresh, replayer "
        f"loaded) 100k {med('big', 'ready') * 1e3:.0f} ms, empty {med('empty', 'ready') * 1e3:.0f} "
        f"ms{flash}; cold subprocesses, median of {reps}")]
    cold = empty / minimal
    litellm = "not imported" if not any(x["litellm_at_ready"] for x in runs["empty"] + runs["big"]) \
        else "IMPORTED"
    lines.append(fmt(
        "cold_start_vs_minimal_textual", f"{cold:.2f}x", f"<= {COLD_GOAL:g}x", cold <= COLD_GOAL,
        f"ikigai (empty db) {empty * 1e3:.0f} ms, minimal Textual app {minimal * 1e3:.0f} ms to "
        f"first paint; imports {med('empty', 'imported') * 1e3:.0f} / "
        f"{med('minimal', 'imported') * 1e3:.0f} ms; litellm {litellm} by first paint or first "
        f"refresh; cold subprocesses, median of {reps}"))
    return lines, problems


def figures(quick: bool = False) -> Iterator[str]:
    """The figure lines, each as soon as it is measured, then any CHECK FAILED lines."""
    problems: list[str] = []
    tmp = gen.DATA / f"tmp-tui-{os.getpid()}"
    try:
        dbs = {"big": ensure_db(BIG), "empty": ensure_db(0)}
        tmp.mkdir(parents=True, exist_ok=True)
        for name, path in list(dbs.items()):
            dbs[name] = tmp / f"{name}.db"
            shutil.copyfile(path, dbs[name])

        try:
            lines, found = startup(dbs, 3 if quick else 5)
            problems.extend(found)
            yield lines[0]
            cold_line = lines[1]
        except Exception as exc:  # report and go on: the other figures still mean something
            problems.append(f"start-up figures: {exc}")
            cold_line = None

        memory_line = None
        try:
            s = child(["scroll", str(dbs["big"]), str(2 if quick else 3)])
            problems.extend(s["problems"])
            every = [t for ts in s["times"].values() for t in ts]
            median = statistics.median(every) * 1e3
            per_key = ", ".join(f"{k} {statistics.median(v) * 1e3:.1f}" for k, v in s["times"].items())
            yield fmt(
                "scroll_100k_median_ms", f"{median:.1f} ms", f"< {SCROLL_GOAL_MS:g} ms",
                median < SCROLL_GOAL_MS,
                f"worst {s['worst'][0] * 1e3:.1f} ms ({s['worst'][1]}); medians {per_key} ms; "
                f"action alone {statistics.median(s['actions']) * 1e3:.1f} ms; key event to the "
                f"settled repaint (page loads included), {len(every)} presses; "
                f"{s['lines']:,} lines loaded")
            mb = s["mem_after"]["VmRSS"]
            memory_line = fmt(
                "memory_100k_mb", f"{mb:.0f} MB", f"<= {MEMORY_GOAL_MB:g} MB", mb <= MEMORY_GOAL_MB,
                f"VmRSS after first paint + first refresh {s['mem_open']['VmRSS']:.0f} MB, after "
                f"{len(every) + 4} scroll keys {mb:.0f} MB; peak (VmHWM) {s['mem_after']['VmHWM']:.0f} MB")
        except Exception as exc:
            problems.append(f"scroll/memory figures: {exc}")

        try:
            st = child(["stream", str(dbs["empty"]), str(dbs["big"]), str(1 if quick else 3)])
            problems.extend(st["problems"])
            ratio = statistics.median(st["ratios"])
            yield fmt(
                "stream_10k_last_vs_first", f"{ratio:.2f}x", f"<= {STREAM_GOAL:g}x",
                ratio <= STREAM_GOAL,
                f"last 1,000 chunks {statistics.median(st['lasts']) * 1e3:.0f} ms, first 1,000 "
                f"{statistics.median(st['firsts']) * 1e3:.0f} ms (stream + paint of each chunk); "
                f"median chunk {statistics.median(m[1] for m in st['medians']) * 1e6:.0f} / "
                f"{statistics.median(m[0] for m in st['medians']) * 1e6:.0f} us; chunks of 5-20 "
                f"chars, at the end of the 100k transcript; median of {len(st['ratios'])} replies")
        except Exception as exc:
            problems.append(f"stream figure: {exc}")

        if cold_line:
            yield cold_line
        if memory_line:
            yield memory_line
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for text in problems:
        yield f"CHECK FAILED: {text}"


def main(argv: list[str]) -> None:
    """`gen N PATH`: write the database of N messages to PATH (ensure_db runs this);
    otherwise the figures, as figure.main (the drivers are in tui_drive.py)."""
    if argv[:1] == ["gen"]:
        generate(int(argv[1]), Path(argv[2]))
    else:
        figures_main(figures)


if __name__ == "__main__":
    main(sys.argv[1:])
