"""Benchmarks of the full-screen app (Textual). benchmarks/run.py prints these lines after
its own figures.

  first_paint_100k_vs_empty     Time to first paint of the app on a database whose root
                                agent (focused at start) holds 100,000 messages, over the
                                same on a database whose root holds none.
  scroll_100k_median_ms         Keypress to repaint with those 100,000 messages open at
                                120x40: page up (repeated), ctrl+home, ctrl+end.
  stream_10k_last_vs_first      Streaming a 10,000-chunk reply into the scrollback: the
                                per-chunk cost (stream + paint) of the last 1,000 chunks
                                over that of the first 1,000.
  cold_start_vs_minimal_textual Time to first paint of the app on the empty database over
                                that of a minimal Textual app (one Static), started the
                                same way. Also checks litellm is not imported at start-up.
  memory_100k_mb                Resident memory (VmRSS) of the app with the 100,000
                                messages open, after first paint and the scroll figure.

Everything runs in child processes of this one (`python benchmarks/tui.py MODE ...`), so
neither this process's heap nor its imports touch the figures; each child is a cold
interpreter. Start-up figures: each run records time.perf_counter() at the top of this
file (before textual or ikigai_tui is imported) and the moment of first paint; the runs of
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
and copied to a temporary folder for each run so the cache is never changed.
"""

from __future__ import annotations

import time

T0 = time.perf_counter()  # a driver child's start: before textual or ikigai_tui is imported

import asyncio  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import random  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402

perf = time.perf_counter
HERE = Path(__file__).resolve().parent
TUI_GEN_VERSION = 1
BIG = 100_000
SIZE = (120, 40)
BATCH = 10_000

PAINT_GOAL = 1.5
SCROLL_GOAL_MS = 50.0
STREAM_GOAL = 1.5
COLD_GOAL = 1.5
MEMORY_GOAL_MB = 250.0

SCROLL_ROUND = ["pageup"] * 8 + ["ctrl+home", "ctrl+end"]
STREAM_CHUNKS = 10_000
STREAM_BLOCK = 1_000


def fmt(name: str, value: str, goal: str, ok: bool, details: str) -> str:
    return f"{name}: {value} ({goal}) {'ok' if ok else 'miss'}   [{details}]"


# -- data (parent side) ------------------------------------------------------------------


def db_path(n: int) -> Path:
    import gen

    return gen.DATA / f"tui-{n}-v{TUI_GEN_VERSION}-s{gen.schema_tag()}.db"


def ensure_db(n: int) -> Path:
    """The cached database of n messages; generated in a child process when missing."""
    import gen

    path = db_path(n)
    if path.exists():
        return path
    gen.DATA.mkdir(parents=True, exist_ok=True)
    for stale in gen.DATA.glob(f"tui-{n}-v*"):
        if not stale.name.startswith(path.stem):
            stale.unlink()
    print(f"generating the TUI database of {n:,} messages -> {path.relative_to(HERE.parent)} ...",
          flush=True)
    subprocess.run([sys.executable, __file__, "gen", str(n), str(path)], check=True)
    return path


class Texts:
    """Messages of realistic, varied lengths; replies with paragraphs, lists and code."""

    def __init__(self, rng: random.Random) -> None:
        # Imported here, not at the top: the start-up figures time this script's imports.
        from gen import run_of_words, vocabulary

        words = vocabulary(rng)
        self.rng = rng

        def sentence_run(mean: int) -> str:
            return run_of_words(rng, words, mean)

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
    from ikigai_tui.core.events import AgentRecord, WriteBatch
    from ikigai_tui.core.store import Store

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
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    for p in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
        p.unlink(missing_ok=True)
    t0 = perf()
    asyncio.run(_generate(n, tmp))
    for suffix in ("-wal", "-shm"):
        Path(f"{tmp}{suffix}").unlink(missing_ok=True)
    os.replace(tmp, path)
    print(f"  done in {perf() - t0:.1f} s", flush=True)


# -- the children (drivers) ----------------------------------------------------------------


def vm_status() -> dict[str, float]:
    """VmRSS and VmHWM (peak) of this process, in MB."""
    out = {}
    for text in Path("/proc/self/status").read_text().splitlines():
        key = text.split(":", 1)[0]
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(text.split()[1]) / 1024
    return out


def report(result: dict) -> None:
    print("RESULT " + json.dumps(result), flush=True)


def make_config(db: str):
    from ikigai_tui import config

    # No config file, no IKIGAI_* variables, and the offline model: the machine's settings
    # and provider keys cannot change what is measured.
    return config.load(db=db, model="offline", env={},
                       config_path=str(Path(db).with_name("no-config.toml")))


def count_terminal_output(app_class) -> None:
    """Headless runs skip writing a frame; generate its escape sequences anyway."""
    original = app_class._display

    def _display(self, screen, renderable) -> None:
        if renderable is not None and hasattr(renderable, "render_segments"):
            renderable.render_segments(self.console)
        original(self, screen, renderable)

    app_class._display = _display


def drive_paint(kind: str, db: str) -> None:
    """One cold start: report when the first paint (and, for ikigai, the first refresh) happened."""
    state: dict = {"content": False, "paint": None, "frames": 0, "ready": None,
                   "litellm_at_paint": None, "litellm_at_ready": None}
    from textual.app import App

    imported_at = None
    if kind == "minimal":
        from textual.widgets import Static

        class Shown(Static):
            def render(self):
                state["content"] = True
                return super().render()

        class Minimal(App[None]):
            def compose(self):
                yield Shown("ikigai")

        imported_at = perf()
        app = Minimal()
    else:
        from ikigai_tui.tui.app import IkigaiApp, create_app
        from ikigai_tui.tui.widgets.scrollback import Scrollback

        imported_at = perf()
        render_line, refresh = Scrollback.render_line, IkigaiApp._refresh

        def line(self, y: int):
            # Content, laid out at the widget's real width: the latest page is read before
            # the first layout and drawn by on_resize (which sets _width).
            if self.loaded:
                if self._lines and not self._width:  # drawn before its real width was known
                    state.setdefault("flash", perf() - T0)
                if not self.items or (self._lines and self._width):
                    state["content"] = True
            return render_line(self, y)

        async def refreshed(self) -> None:
            await refresh(self)
            if state["ready"] is None:
                state["ready"] = perf()
                state["litellm_at_ready"] = "litellm" in sys.modules
                sb = self.panes.active.scrollback
                state["items"] = len(sb.items)
                state["view"] = [sb.scroll_y, sb.max_scroll_y]
                if state["paint"] is not None:
                    self.exit()

        Scrollback.render_line, IkigaiApp._refresh = line, refreshed
        app = create_app(make_config(db))

    count_terminal_output(App)
    display = App._display

    def _display(self, screen, renderable) -> None:
        display(self, screen, renderable)
        if renderable is None:
            return
        state["frames"] += 1
        if state["content"] and state["paint"] is None:
            state["paint"] = perf()
            state["litellm_at_paint"] = "litellm" in sys.modules
            if kind == "minimal" or state["ready"] is not None:
                self.exit()

    App._display = _display

    async def watchdog() -> None:
        await asyncio.sleep(120)
        app.exit()

    async def run() -> None:
        task = asyncio.get_running_loop().create_task(watchdog())
        await app.run_async(headless=True, size=SIZE)
        task.cancel()

    asyncio.run(run())
    report({"t0": T0, "imported": imported_at - T0, "frames": state["frames"],
            "paint": None if state["paint"] is None else state["paint"] - T0,
            "ready": None if state["ready"] is None else state["ready"] - T0,
            "litellm_at_paint": state["litellm_at_paint"],
            "litellm_at_ready": state["litellm_at_ready"], "items": state.get("items"),
            "view": state.get("view"), "flash": state.get("flash")})


_PATCHED: set[str] = set()


async def _open(db: str):
    """The app at 120x40 (run it under run_test), and an event set after its first refresh
    (the gauge and the tree: the focused agent's replayer is loaded by then)."""
    from ikigai_tui.tui.app import IkigaiApp, create_app
    from textual.app import App

    if "open" not in _PATCHED:
        _PATCHED.add("open")
        count_terminal_output(App)
        refresh = IkigaiApp._refresh

        async def refreshed(self) -> None:
            await refresh(self)
            self._bench_ready.set()

        IkigaiApp._refresh = refreshed
    app = create_app(make_config(db))
    app._bench_ready = ready = asyncio.Event()
    return app, ready


async def settle(app, pilot) -> None:
    """Until nothing is pending: messages, page loads, and the repaint (forced now rather
    than on the next tick of the screen's update timer, which is not the product's cost)."""
    sb = app.panes.active.scrollback
    for _ in range(20):
        await pilot._wait_for_screen()
        pending = [w for w in app.workers if w.node is sb and not w.is_finished]
        if pending:
            await app.workers.wait_for_complete(pending)
            continue
        screen = app.screen
        if not (screen._dirty_widgets or screen._layout_required or screen._scroll_required
                or screen._repaint_required):
            return
        screen._on_timer_update()


async def _scroll(db: str, rounds: int) -> dict:
    from textual import events

    from ikigai_tui.tui.app import IkigaiApp

    app, ready = await _open(db)
    done = asyncio.Event()
    action = IkigaiApp.action_scroll

    async def scrolled(self, how: str) -> None:
        await action(self, how)
        done.set()

    IkigaiApp.action_scroll = scrolled
    problems: list[str] = []
    async with app.run_test(size=SIZE) as pilot:
        await asyncio.wait_for(ready.wait(), 120)
        await settle(app, pilot)
        sb = app.panes.active.scrollback
        mem_open = vm_status()
        if not sb.items:
            problems.append("scroll: the scrollback shows no items")

        async def press(key: str) -> tuple[float, float]:
            """Seconds from the key event to the action's end, and to the settled repaint."""
            done.clear()
            t0 = perf()
            app._driver.send_message(events.Key(key, None))
            await asyncio.wait_for(done.wait(), 30)
            t1 = perf()
            await settle(app, pilot)
            return t1 - t0, perf() - t0

        for key in ["pageup", "pageup", "ctrl+home", "ctrl+end"]:  # warm-up, untimed
            await press(key)
        times: dict[str, list[float]] = {}
        actions: list[float] = []
        worst = (0.0, "")
        for _ in range(rounds):
            for key in SCROLL_ROUND:
                before = (sb.scroll_y, sb._first_key())
                acted, total = await press(key)
                after = (sb.scroll_y, sb._first_key())
                times.setdefault(key, []).append(total)
                actions.append(acted)
                if total > worst[0]:
                    worst = (total, key)
                if key == "pageup" and after == before and not sb.at_start:
                    problems.append("scroll: page up did not move the view")
                if key == "ctrl+home" and not (sb.at_start and sb.scroll_y == 0):
                    problems.append("scroll: ctrl+home did not show the start")
                if key == "ctrl+end" and not (sb.at_end and sb.scroll_y >= sb.max_scroll_y):
                    problems.append("scroll: ctrl+end did not show the end")
        mem_after = vm_status()
        lines = len(sb._lines)
        await pilot.pause()
    return {"times": times, "actions": actions, "worst": worst, "mem_open": mem_open,
            "mem_after": mem_after, "lines": lines, "problems": sorted(set(problems))}


def stream_chunks(count: int, seed: int) -> list[str]:
    """Pieces of 5-20 characters, as a provider streams them; a newline now and then."""
    rng = random.Random(seed)
    words = ["the", "scrollback", "renders", "only", "what", "is", "visible", "and", "a",
             "reply", "streams", "into", "it", "line", "by", "`code`", "**bold**", "naïve", "é"]
    text, size = [], 0
    while size < count * 20:
        word = rng.choice(words)
        gap = "\n" if rng.random() < 0.01 else ("\n\n" if rng.random() < 0.005 else " ")
        text += [word, gap]
        size += len(word) + len(gap)
    whole = "".join(text)
    pieces, at = [], 0
    for _ in range(count):
        size = rng.randint(5, 20)
        pieces.append(whole[at:at + size])
        at += size
    return pieces


def follows(sb) -> bool:
    return sb.scroll_y >= sb.max_scroll_y


async def _stream_chunks(app, sb, chunks: list[str]) -> list[float]:
    """Seconds per chunk. One chunk: the widget takes it, the frame is painted at once (the
    compositor renders the dirty lines through Scrollback.render_line), then the loop runs
    whatever the chunk posted. A paint per chunk is the worst case of the app's real
    cadence (at most one paint per tick of the screen's update timer)."""
    screen = app.screen
    times = []
    for piece in chunks:
        t0 = perf()
        sb.stream(piece)
        screen._on_timer_update()
        await asyncio.sleep(0)
        times.append(perf() - t0)
    return times


async def _stream(empty_db: str, big_db: str, reps: int) -> dict:
    problems: list[str] = []
    # A check: a reply that outgrows a scrollback which was not full keeps the view at its end.
    app, ready = await _open(empty_db)
    async with app.run_test(size=SIZE) as pilot:
        await asyncio.wait_for(ready.wait(), 120)
        await settle(app, pilot)
        sb = app.panes.active.scrollback
        await _stream_chunks(app, sb, stream_chunks(1_000, seed=99))
        await settle(app, pilot)
        if not follows(sb):
            problems.append(
                f"stream: on an empty agent, a reply longer than the view stops following at the "
                f"line where it first overflows (view at line {sb.scroll_y:.0f} of "
                f"{sb.max_scroll_y} after 1,000 chunks)")
        await pilot.pause()
    # The figure: replies streamed at the end of the 100k agent's transcript (its view
    # already scrolls, so the reply is followed and its new lines are the painted ones).
    ratios, firsts, lasts, medians = [], [], [], []
    app, ready = await _open(big_db)
    async with app.run_test(size=SIZE) as pilot:
        await asyncio.wait_for(ready.wait(), 120)
        await settle(app, pilot)
        sb = app.panes.active.scrollback
        for rep in range(reps + 1):  # the first reply is a warm-up
            await app.action_scroll("end")
            await settle(app, pilot)
            if not follows(sb):
                problems.append("stream: ctrl+end did not reach the end before the reply")
            chunks = stream_chunks(STREAM_CHUNKS if rep else 1_000, seed=rep)
            lines_before = len(sb._lines)
            times = await _stream_chunks(app, sb, chunks)
            await settle(app, pilot)
            if not follows(sb):
                problems.append("stream: the view did not follow a reply at the end of the transcript")
            grown = len(sb._lines) - lines_before
            if grown < sum(map(len, chunks)) // 130:
                problems.append(f"stream: only {grown} lines for {sum(map(len, chunks))} characters")
            sb.end_stream()
            await settle(app, pilot)
            if rep:
                first, last = times[:STREAM_BLOCK], times[-STREAM_BLOCK:]
                ratios.append(sum(last) / sum(first))
                firsts.append(sum(first))
                lasts.append(sum(last))
                medians.append((statistics.median(first), statistics.median(last)))
        await pilot.pause()
    return {"ratios": ratios, "firsts": firsts, "lasts": lasts, "medians": medians,
            "problems": problems}


def drive_async(job) -> None:
    report(asyncio.run(job))


# -- the parent ----------------------------------------------------------------------------


def child(args: list[str], timeout: float = 600) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TEXTUAL_THEME")}
    spawned = perf()
    proc = subprocess.run([sys.executable, str(Path(__file__)), *args], capture_output=True,
                          text=True, timeout=timeout, env=env)
    for text in proc.stdout.splitlines():
        if text.startswith("RESULT "):
            result = json.loads(text[7:])
            if "t0" in result:  # perf_counter is CLOCK_MONOTONIC: comparable across processes
                result["interpreter"] = result["t0"] - spawned
            return result
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
    raise RuntimeError(f"{' '.join(args[:2])} exited {proc.returncode}: {' | '.join(tail)}")


def startup(dbs: dict[str, Path], reps: int) -> tuple[list[str], list[str]]:
    """Figures 1 and 4: runs of the three kinds interleaved, order rotating per round."""
    kinds = {"big": ["paint", "ikigai", str(dbs["big"])],
             "empty": ["paint", "ikigai", str(dbs["empty"])],
             "minimal": ["paint", "minimal"]}
    names = list(kinds)
    # As installed (make install does the same): the package byte-compiled, like textual
    # in site-packages, even where PYTHONDONTWRITEBYTECODE stops Python writing caches.
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(HERE.parent / "ikigai_tui")],
                   check=True)
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
    import gen

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
    mode = argv[0]
    if mode == "gen":
        generate(int(argv[1]), Path(argv[2]))
    elif mode == "paint":
        drive_paint(argv[1], argv[2] if len(argv) > 2 else "")
    elif mode == "scroll":
        drive_async(_scroll(argv[1], int(argv[2])))
    elif mode == "stream":
        drive_async(_stream(argv[1], argv[2], int(argv[3])))
    else:
        raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
