"""Benchmarks of opening a big log in the full-screen app, as a user with a key opens it:
what they wait for and whether the screen freezes meanwhile. benchmarks/run.py prints
these lines after its own figures (`make bench BENCH_ARGS="--only open_stall"`: these
alone).

  open_stall_max_ms     The longest event-loop stall while the app opens a log of
                        2,000, 10,000 and 100,000 messages, from its start to ready (the
                        gauge showing the count: exact on gpt-4o) plus 0.5 s after,
                        measured by a loop-lag probe: a task on the app's own loop
                        sleeping 5 ms again and again; a wake-up later than asked is a
                        stall of that lateness. The figure is the worst size and model.
  open_first_frame_s    Time to the first frame with the conversation in it, from the
                        app's start (after the imports, which benchmarks/tui.py
                        measures), the worst size and model.
  open_ready_100k_s     Time to ready at 100,000 messages, the worse model.
  open_rss_100k_mb      Resident memory (VmRSS) at ready with 100,000 messages, the worse
                        model.
  open_rss_growth       RSS at 100,000 messages over 10,000, the worst of: at ready on
                        each model, and on gpt-4o once litellm is warmed up (6 s after
                        ready; one open of each size).
  stall_open_uncounted_o200k_ms
                        The longest stall, start to ready + 0.5 s, opening a log of
                        10,000 messages whose token counts are not kept (an older or
                        imported log), its agent on openai/gpt-4o: o200k_base's tables
                        are built (in a worker process) and every message counted; the
                        median of 3 runs, each on a fresh copy with the counts removed.

Each open is the real program (`python -m ikigai_tui --db DB --model MODEL --api-base
URL`) in a pseudo-terminal of 120x40, an OPENAI_API_KEY in its environment and URL the
loopback fake provider (tests/fakes/server.py; opening must send it nothing), its screen
read as the terminal gets it: benchmarks/open_real.py, which says how each moment is
taken. The logs are copies of the databases benchmarks/tui.py generates (one root agent,
user and assistant messages alternating), its agent on the offline model (estimated
counts) or on openai/gpt-4o (exact tiktoken counts). With the key, the app warms litellm
up once it is ready, as it does for a user; the offline model never loads it. The first
open of each copy counts its tokens and keeps them (shown in the details); the figures
are medians of the later opens (3, 1 with --quick).

  --profile DB MODEL   cProfile of the app's loop thread over one open, in this process
                       and headless (top by own time)
  --watch DB MODEL     the same open, with the loop thread's stack whenever the loop is
                       30 ms late
  --uncounted          only the stall_open_uncounted_o200k_ms figure
"""

from __future__ import annotations

import time

T0 = time.perf_counter()

import asyncio  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402

from figure import fmt  # noqa: E402

perf = time.perf_counter
HERE = Path(__file__).resolve().parent
SIZES = (2_000, 10_000, 100_000)
MODELS = ("offline", "openai/gpt-4o")
STALL_GOAL_MS = 50.0
FIRST_FRAME_GOAL_S = 0.15
READY_GOAL_S = 1.0
RSS_GOAL_MB = 200.0
GROWTH_GOAL = 1.3
AFTER_READY = 0.5
UNCOUNTED = (10_000, "openai/gpt-4o", "o200k_base")
GROWTH_SIZES = (10_000, 100_000)
SETTLE_S = 6.0  # after ready, for litellm's warm-up (3-4 s) to be done


# -- the child ----------------------------------------------------------------------------


class Watch:
    """Debugging (--watch): where the loop thread is while it is late, from a thread."""

    def __init__(self, probe) -> None:
        self.probe = probe
        self.stacks: list[str] = []
        self.done = False

    def start(self) -> None:
        import threading

        threading.Thread(target=self._run, args=(threading.get_ident(),), daemon=True).start()

    def _run(self, loop_thread: int) -> None:
        import traceback

        while not self.done:
            time.sleep(0.01)
            due = self.probe._due
            if due and perf() - due > 0.03:
                frame = sys._current_frames().get(loop_thread)
                if frame is not None:
                    where = "".join(traceback.format_stack(frame, limit=12))
                    self.stacks.append(f"-- at {perf() - T0:.3f} s, "
                                       f"{(perf() - due) * 1e3:.0f} ms late:\n{where}")


def drive(db: str, model: str, profile: bool = False, watch: bool = False) -> dict:
    from ikigai_tui import config
    from ikigai_tui.runtime import create_app
    from ikigai_tui.tui.app import IkigaiApp
    from ikigai_tui.tui.widgets.scrollback import Scrollback
    from textual.app import App

    from open_real import FAKE_KEY, vm_rss_mb
    from stall import LagProbe

    state: dict = {"paint": None, "ready": None, "content": False, "start": perf() - T0}
    probe = LagProbe()
    watcher = Watch(probe) if watch else None
    render_line, refresh, display = Scrollback.render_line, IkigaiApp._refresh, App._display

    def line(self, y: int):
        if self.loaded and (not self.items or (self._lines and self._width)):
            state["content"] = True
        return render_line(self, y)

    async def refreshed(self) -> None:
        await refresh(self)
        if state["ready"] is None:
            state["ready"] = perf() - T0
            state["rss"] = vm_rss_mb(os.getpid())
            state["tokens"] = self.gauge_tokens if hasattr(self, "gauge_tokens") else None
            self.set_timer(AFTER_READY, self.exit)

    def _display(self, screen, renderable) -> None:
        if renderable is not None and hasattr(renderable, "render_segments"):
            renderable.render_segments(self.console)
        display(self, screen, renderable)
        if renderable is not None and state["content"] and state["paint"] is None:
            state["paint"] = perf() - T0

    Scrollback.render_line, IkigaiApp._refresh, App._display = line, refreshed, _display
    os.environ["OPENAI_API_KEY"] = FAKE_KEY  # a user's: litellm warmed up once ready
    settings = config.load(db=db, model=model, env={"OPENAI_API_KEY": FAKE_KEY},
                           config_path=str(Path(db).with_name("no-config.toml")))
    app = create_app(settings)
    prof = None
    if profile:
        import cProfile

        prof = cProfile.Profile()

    async def run() -> None:
        probe.start()
        state["probe_t0"] = probe._t0 - T0
        if watcher is not None:
            watcher.start()
        watchdog = asyncio.get_running_loop().call_later(120, app.exit)
        if prof is not None:
            prof.enable()
        await app.run_async(headless=True, size=(120, 40))
        if prof is not None:
            prof.disable()
        watchdog.cancel()
        await probe.stop()
        if watcher is not None:
            watcher.done = True

    asyncio.run(run())
    paint = state["paint"]
    at = state["probe_t0"]
    before = [ms for t, ms in probe.stalls if paint is None or at + t < paint]
    after = [ms for t, ms in probe.stalls if paint is not None and at + t >= paint]
    worst_at = max(probe.stalls, key=lambda s: s[1], default=(0.0, 0.0))[0] + at
    result = {"start": state["start"], "paint": paint, "ready": state["ready"],
              "rss": state.get("rss"), "stall": probe.longest_ms / 1e3, "stall_at": worst_at,
              "stall_before_paint": max(before, default=0.0) / 1e3,
              "stall_after_paint": max(after, default=0.0) / 1e3}
    if watcher is not None:
        result["stacks"] = watcher.stacks
    if prof is not None:
        import io
        import pstats

        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(25)
        result["profile"] = out.getvalue()
    return result


# -- the parent ---------------------------------------------------------------------------


def measure(reps: int) -> tuple[dict, dict, dict, list[str]]:
    """Per (size, model): the first open's result (nothing counted yet), the later opens'
    results, and for gpt-4o at 10,000 and 100,000 one open left to settle (litellm
    warmed up); each the real program on a copy of the cached database (open_real.py)."""
    import tempfile

    import gen
    import open_real
    import tui

    problems: list[str] = []
    firsts: dict[tuple[int, str], dict] = {}
    runs: dict[tuple[int, str], list[dict]] = {}
    settled: dict[int, dict] = {}
    gen.DATA.mkdir(parents=True, exist_ok=True)
    with open_real.fake_provider() as fake, tempfile.TemporaryDirectory(dir=gen.DATA) as tmp:
        for n in SIZES:
            source = tui.ensure_db(n)
            for model in MODELS:
                path = open_real.prepare(source, Path(tmp) / f"{n}-{model.replace('/', '-')}.db", model)

                def one(linger: float = open_real.AFTER_READY) -> dict | None:
                    result = open_real.open_once(path, model, fake.openai_base, Path(tmp), linger=linger)
                    if result["paint"] is None or result["ready"] is None or result["start"] is None:
                        problems.append(f"open {n:,} ({model}): never painted or never ready; the "
                                        f"screen's last text: {result.get('tail', '')[-120:]!r}")
                        return None
                    if model == "offline" and result["litellm"]:
                        problems.append(f"open {n:,} (offline): litellm was imported")
                    return result

                first = one()
                if first is not None:
                    firsts[n, model] = first
                runs[n, model] = [r for r in (one() for _ in range(reps)) if r is not None]
                if model != "offline" and n in GROWTH_SIZES:
                    late = one(SETTLE_S)
                    if late is not None:
                        settled[n] = late
                        if not late["litellm"]:
                            problems.append(f"open {n:,} ({model}): litellm not warmed up "
                                            f"{SETTLE_S:g} s after ready")
        if fake.requests:
            problems.append(f"opening sent {len(fake.requests)} request(s) to the provider")
    return firsts, runs, settled, problems


def uncounted(reps: int = 3) -> Iterator[str]:
    """stall_open_uncounted_o200k_ms: opens of a log whose counts are not kept."""
    import sqlite3
    import tempfile

    import gen
    import open_real
    import tui

    n, model, encoding = UNCOUNTED
    results, problems = [], []
    gen.DATA.mkdir(parents=True, exist_ok=True)
    with open_real.fake_provider() as fake, tempfile.TemporaryDirectory(dir=gen.DATA) as tmp:
        source = tui.ensure_db(n)
        for i in range(reps):
            path = open_real.prepare(source, Path(tmp) / f"uncounted-{i}.db", model)
            with sqlite3.connect(path) as db:
                db.execute("DELETE FROM message_tokens")
                db.execute("DELETE FROM text_tokens")
            db.close()
            result = open_real.open_once(path, model, fake.openai_base, Path(tmp))
            with sqlite3.connect(path) as db:
                kept = db.execute("SELECT count(*) FROM message_tokens WHERE encoding = ?",
                                  (encoding,)).fetchone()[0]
            db.close()
            if result["ready"] is None or result["start"] is None or not kept:
                problems.append(f"uncounted open {i}: never ready, or its counts not kept")
                continue
            results.append(result)
    if results:
        stalls = [r["stall_ms"] for r in results]
        worst = statistics.median(stalls)
        yield fmt(
            "stall_open_uncounted_o200k_ms", f"{worst:.0f} ms", f"<= {STALL_GOAL_MS:g} ms",
            worst <= STALL_GOAL_MS,
            f"{n:,} messages, {model}, no counts kept, a key set; runs "
            + ", ".join(f"{x:.0f}" for x in stalls) + " ms (before / after the first frame: "
            + ", ".join(f"{r['stall_before_paint_ms']:.0f}/{r['stall_after_paint_ms']:.0f}"
                        for r in results) + "); ready (all counted) in " + ", ".join(
                f"{open_real.since_start(r, 'ready'):.2f}" for r in results)
            + " s; RSS at ready " + ", ".join(f"{r['rss']:.0f}" for r in results) + " MiB")
    for text in problems:
        yield f"CHECK FAILED: {text}"


def figures(quick: bool = False) -> Iterator[str]:
    from open_real import since_start

    yield from uncounted()
    firsts, runs, settled, problems = measure(1 if quick else 3)

    def med(n: int, model: str, key: str) -> float:
        def value(r: dict) -> float | None:
            return since_start(r, key) if key in ("paint", "ready") else r[key]

        values = [v for r in runs.get((n, model), ()) if (v := value(r)) is not None]
        return statistics.median(values) if values else float("nan")

    def first(n: int, model: str, key: str) -> float:
        r = firsts.get((n, model))
        if r is None:
            return float("nan")
        return since_start(r, key) if key in ("paint", "ready") else r[key]

    keys = [(n, m) for n in SIZES for m in MODELS]
    short = {m: ("offline" if m == "offline" else m.split("/")[-1]) for m in MODELS}
    if any(runs.values()):
        per = {k: med(*k, "stall_ms") for k in keys}
        worst = max(per.values())
        yield fmt(
            "open_stall_max_ms", f"{worst:.0f} ms", f"<= {STALL_GOAL_MS:g} ms",
            worst <= STALL_GOAL_MS,
            "longest stall, start to ready + 0.5 s (before / after the first frame): " + "; ".join(
                f"{n:,} {short[m]} {per[n, m]:.0f} ({med(n, m, 'stall_before_paint_ms'):.0f}"
                f" / {med(n, m, 'stall_after_paint_ms'):.0f})" for n, m in keys)
            + " ms; first open of each log (its token counts not kept yet): " + ", ".join(
                f"{n:,} {short[m]} {first(n, m, 'stall_ms'):.0f}" for n, m in keys)
            + " ms; while litellm warms up after that (gpt-4o): " + ", ".join(
                f"{n:,} {r['stall_later_ms']:.0f}" for n, r in settled.items()) + " ms")
        paints = {k: med(*k, "paint") for k in keys}
        top = max(paints.values())
        spawn = statistics.median(r["start"] - r["spawned"] for rs in runs.values() for r in rs)
        yield fmt(
            "open_first_frame_s", f"{top:.3f} s", f"<= {FIRST_FRAME_GOAL_S} s",
            top <= FIRST_FRAME_GOAL_S,
            f"from the app's start (the program's imports before it: {spawn:.2f} s): "
            + ", ".join(f"{n:,} {short[m]} {v:.3f}" for (n, m), v in paints.items()) + " s")
        readies = {m: med(100_000, m, "ready") for m in MODELS}
        ready = max(readies.values())
        yield fmt(
            "open_ready_100k_s", f"{ready:.2f} s", f"<= {READY_GOAL_S} s", ready <= READY_GOAL_S,
            "from the app's start to the gauge's count (exact on gpt-4o): " + ", ".join(
                f"{short[m]} {v:.2f}" for m, v in readies.items())
            + " s; first open (counting): " + ", ".join(
                f"{short[m]} {first(100_000, m, 'ready'):.2f}" for m in MODELS)
            + " s; at 2,000 / 10,000: " + "; ".join(
                f"{short[m]} " + ", ".join(f"{med(n, m, 'ready'):.2f}" for n in SIZES[:-1])
                for m in MODELS) + " s")
        rss = {k: med(*k, "rss") for k in keys}
        top_rss = max(rss[100_000, m] for m in MODELS)
        yield fmt(
            "open_rss_100k_mb", f"{top_rss:.0f} MiB", f"<= {RSS_GOAL_MB:g} MiB",
            top_rss <= RSS_GOAL_MB,
            "VmRSS at ready: " + "; ".join(
                f"{short[m]} " + ", ".join(f"{n:,} {rss[n, m]:.0f}" for n in SIZES) for m in MODELS)
            + " MiB; gpt-4o once litellm is warmed up: " + ", ".join(
                f"{n:,} {r['rss_end']:.0f}" for n, r in settled.items()) + " MiB")
        small, big = GROWTH_SIZES
        growths = {f"{short[m]} at ready": rss[big, m] / rss[small, m] for m in MODELS}
        if len(settled) == 2:
            growths[f"{short[MODELS[1]]} warmed up"] = settled[big]["rss_end"] / settled[small]["rss_end"]
        growth = max(growths.values())
        yield fmt("open_rss_growth", f"{growth:.2f}x", f"<= {GROWTH_GOAL}x", growth <= GROWTH_GOAL,
                  f"RSS, {big:,} over {small:,} messages, the worst of: " + ", ".join(
                      f"{k} {v:.2f}x" for k, v in growths.items())
                  + f"; medians of {len(runs.get((big, MODELS[1]), ()))} (warmed up: one open, "
                  f"{SETTLE_S:g} s after ready)")
    for text in problems:
        yield f"CHECK FAILED: {text}"


def main(argv: list[str]) -> None:
    sys.path.insert(0, str(HERE))
    if argv and argv[0] == "--watch":
        result = drive(argv[1], argv[2], watch=True)
        print("\n".join(result.pop("stacks")))
        print(json.dumps(result))
    elif argv and argv[0] == "--uncounted":
        for text in uncounted():
            print(text, flush=True)
    elif argv and argv[0] == "--profile":
        result = drive(argv[1], argv[2], profile=True)
        print(result.pop("profile"))
        print(json.dumps(result))
    else:
        for text in figures(quick="--quick" in argv):
            print(text, flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
