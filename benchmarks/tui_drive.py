"""The child side of benchmarks/tui.py: each run of this script is one cold child process
that drives the full-screen app (Textual) headless and prints one `RESULT {json}` line.

  python benchmarks/tui_drive.py paint ikigai DB   one cold start: time to first paint (and,
                                                   for the app, to its first refresh)
  python benchmarks/tui_drive.py paint minimal     the same for a minimal Textual app
  python benchmarks/tui_drive.py scroll DB ROUNDS  keypress-to-repaint times, and memory
  python benchmarks/tui_drive.py stream EMPTY_DB BIG_DB REPS
                                                   per-chunk cost of streamed replies

T0, the first statement below, is a run's start for the start-up figures: it comes before
textual or ikigai_tui is imported. Only the standard library is imported at the top; textual
and ikigai_tui are imported inside the drivers. What the figures mean, and how the parent
(benchmarks/tui.py) runs these children and reads their results, is described there.
"""

from __future__ import annotations

import time

T0 = time.perf_counter()  # this child's start: before textual or ikigai_tui is imported

import asyncio  # noqa: E402
import contextlib  # noqa: E402
import os  # noqa: E402
import random  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

from figure import report  # noqa: E402  (standard library only)

perf = time.perf_counter
SIZE = (120, 40)
SCROLL_ROUND = ["pageup"] * 8 + ["ctrl+home", "ctrl+end"]
STREAM_CHUNKS = 10_000
STREAM_BLOCK = 1_000


def vm_status() -> dict[str, float]:
    """VmRSS and VmHWM (peak) of this process, in MB."""
    out = {}
    for text in Path("/proc/self/status").read_text().splitlines():
        key = text.split(":", 1)[0]
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(text.split()[1]) / 1024
    return out


def make_config(db: str):
    from ikigai_tui import config

    # No config file, no IKIGAI_* variables, and the offline model: the machine's settings
    # and provider keys cannot change what is measured.
    # A database URL (benchmarks/postgres.py) has no folder: an empty config file.
    no_config = os.devnull if "://" in db else str(Path(db).with_name("no-config.toml"))
    return config.load(db=db, model="offline", env={}, config_path=no_config)


def count_terminal_output(app_class) -> None:
    """Headless runs skip writing a frame; generate its escape sequences anyway."""
    original = app_class._display

    def _display(self, screen, renderable) -> None:
        if renderable is not None and hasattr(renderable, "render_segments"):
            renderable.render_segments(self.console)
        original(self, screen, renderable)

    app_class._display = _display


def on_frames(app_class, framed) -> None:
    """`framed(app)` after each frame drawn (its escape sequences generated too, as
    count_terminal_output says)."""
    count_terminal_output(app_class)
    display = app_class._display

    def _display(self, screen, renderable) -> None:
        display(self, screen, renderable)
        if renderable is not None:
            framed(self)

    app_class._display = _display


def run_headless(app) -> None:
    """Run the app headless at SIZE to its exit, for 120 s at most."""

    async def watchdog() -> None:
        await asyncio.sleep(120)
        app.exit()

    async def run() -> None:
        task = asyncio.get_running_loop().create_task(watchdog())
        await app.run_async(headless=True, size=SIZE)
        task.cancel()

    asyncio.run(run())


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
        from ikigai_tui.runtime import create_app
        from ikigai_tui.tui.app import IkigaiApp
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

    def framed(self) -> None:
        state["frames"] += 1
        if state["content"] and state["paint"] is None:
            state["paint"] = perf()
            state["litellm_at_paint"] = "litellm" in sys.modules
            if kind == "minimal" or state["ready"] is not None:
                self.exit()

    on_frames(App, framed)

    run_headless(app)
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
    from ikigai_tui.runtime import create_app
    from ikigai_tui.tui.app import IkigaiApp
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


def painted(screen) -> bool:
    """True when the screen has nothing left to lay out or paint; otherwise paints it now
    (rather than on the next tick of the screen's update timer, not the product's cost)."""
    if not (screen._dirty_widgets or screen._layout_required or screen._scroll_required
            or screen._repaint_required):
        return True
    screen._on_timer_update()
    return False


async def settle(app, pilot) -> None:
    """Until nothing is pending: messages, page loads, and the repaint (painted())."""
    sb = app.panes.active.scrollback
    for _ in range(20):
        await pilot._wait_for_screen()
        pending = [w for w in app.workers if w.node is sb and not w.is_finished]
        if pending:
            await app.workers.wait_for_complete(pending)
            continue
        if painted(app.screen):
            return


@contextlib.asynccontextmanager
async def opened(db: str):
    """(app, pilot, its scrollback): the app on `db` at 120x40, after its first refresh,
    settled."""
    app, ready = await _open(db)
    async with app.run_test(size=SIZE) as pilot:
        await asyncio.wait_for(ready.wait(), 120)
        await settle(app, pilot)
        yield app, pilot, app.panes.active.scrollback
        await pilot.pause()


async def _scroll(db: str, rounds: int) -> dict:
    from textual import events

    from ikigai_tui.tui.app import IkigaiApp

    done = asyncio.Event()
    action = IkigaiApp.action_scroll

    async def scrolled(self, how: str) -> None:
        await action(self, how)
        done.set()

    IkigaiApp.action_scroll = scrolled
    problems: list[str] = []
    async with opened(db) as (app, pilot, sb):
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
    """Seconds per chunk. One chunk: it takes the app's real way (the session's StreamDelta
    notice, which the app hands to the widgets that show the agent) until the scrollback
    has it, the frame is painted at once (the compositor renders the dirty lines through
    Scrollback.render_line), then the loop runs whatever the chunk posted. A paint per
    chunk is the worst case of the app's real cadence (at most one paint per tick of the
    screen's update timer)."""
    from ikigai_tui.core.notices import StreamDelta

    screen = app.screen
    notify = app.session.notify
    agent = sb.agent_id
    arrived = lambda: 0 if sb._stream is None else len(sb._stream.text) + sb._stream.more  # noqa: E731
    fed = arrived()
    times = []
    for piece in chunks:
        t0 = perf()
        notify(StreamDelta(agent, piece))
        fed += len(piece)
        for _ in range(100):  # a message is handled on a later turn of the loop
            if arrived() >= fed:
                break
            await asyncio.sleep(0)
        else:
            raise RuntimeError("stream: a chunk did not reach the scrollback")
        screen._on_timer_update()
        await asyncio.sleep(0)
        times.append(perf() - t0)
    return times


async def _stream(empty_db: str, big_db: str, reps: int) -> dict:
    problems: list[str] = []
    # A check: a reply that outgrows a scrollback which was not full keeps the view at its end.
    async with opened(empty_db) as (app, pilot, sb):
        await _stream_chunks(app, sb, stream_chunks(1_000, seed=99))
        await settle(app, pilot)
        if not follows(sb):
            problems.append(
                f"stream: on an empty agent, a reply longer than the view stops following at the "
                f"line where it first overflows (view at line {sb.scroll_y:.0f} of "
                f"{sb.max_scroll_y} after 1,000 chunks)")
    # The figure: replies streamed at the end of the 100k agent's transcript (its view
    # already scrolls, so the reply is followed and its new lines are the painted ones).
    ratios, firsts, lasts, medians = [], [], [], []
    async with opened(big_db) as (app, pilot, sb):
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
    return {"ratios": ratios, "firsts": firsts, "lasts": lasts, "medians": medians,
            "problems": problems}


def drive_async(job) -> None:
    report(asyncio.run(job))


def main(argv: list[str]) -> None:
    mode = argv[0]
    if mode == "paint":
        drive_paint(argv[1], argv[2] if len(argv) > 2 else "")
    elif mode == "scroll":
        drive_async(_scroll(argv[1], int(argv[2])))
    elif mode == "stream":
        drive_async(_stream(argv[1], argv[2], int(argv[3])))
    else:
        raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
