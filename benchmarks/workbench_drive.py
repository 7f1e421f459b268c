"""The child side of benchmarks/workbench.py: one cold run of the app on the workbench
database, five agents streaming, printing one `RESULT {json}` line.

  python benchmarks/workbench_drive.py DB KEYS

What is measured and how is described in benchmarks/workbench.py.
"""

from __future__ import annotations

import asyncio
import itertools
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from figure import report  # noqa: E402
from stall import LagProbe  # noqa: E402
import tui_drive  # noqa: E402
from tui_drive import opened, settle, stream_chunks  # noqa: E402

perf = time.perf_counter
PIECE_EVERY = 0.02  # a piece every 20 ms for each streaming agent
KEY_EVERY = 0.04  # a key every 40 ms (a fast typist)
TREE_EVERY = 0.05
WARM = 1.0  # seconds of streaming before the measurement starts
STREAMERS = 5


class Streams:
    """The provider the bench swaps in for the offline model: a piece every PIECE_EVERY
    seconds until `stop()`, then the usage (as a provider's stream ends)."""

    running = True
    pieces = stream_chunks(4_000, seed=7)

    @classmethod
    def stop(cls) -> None:
        cls.running = False

    class Provider:
        offline = True

        def __init__(self, model: str = "offline", delay: float = 0.0) -> None:
            self.model = model

        async def stream(self, request):
            from ikigai_tui.core.provider import TextDelta, Usage

            sent = 0
            for piece in itertools.cycle(Streams.pieces):
                if not Streams.running:
                    break
                await asyncio.sleep(PIECE_EVERY)
                yield TextDelta(piece)
                sent += 1
            yield Usage(1_000, sent * 3)


def make_config(db: str):
    """tui_drive's config (no file, no IKIGAI_* variables, the offline model), with room
    for the five requests at once (the gateway holds 4 per provider by default)."""
    from ikigai_tui import config

    no_config = str(Path(db).with_name("no-config.toml"))
    return config.load(db=db, model="offline", env={"IKIGAI_CONCURRENCY": str(STREAMERS)},
                       config_path=no_config)


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def drive(db: str, keys: int) -> dict:
    from textual import events
    from textual.app import App
    from textual.screen import Screen

    from ikigai_tui.core.notices import StreamDelta
    from ikigai_tui.llm import providers

    providers.OfflineProvider = Streams.Provider  # (the child's own process only)
    tui_drive.make_config = make_config
    problems: list[str] = []
    async with opened(db) as (app, pilot, _sb):
        for _ in range(2):  # three panes; the third (worker2's) is the focused one
            await pilot.press("f2")
            await settle(app, pilot)
        session = app.session
        tree = session.tree
        panes = app.panes.all()
        focused = app.panes.active.agent_id
        shown = [p.agent_id for p in panes if p.agent_id != focused]
        hidden = [a.id for a, _ in tree.walk() if a.id not in {p.agent_id for p in panes}]
        streamers = shown + hidden[:STREAMERS - len(shown)]

        pieces = {agent: 0 for agent in streamers}
        started = asyncio.Event()

        def counted(notice) -> None:
            if isinstance(notice, StreamDelta) and notice.agent_id in pieces:
                pieces[notice.agent_id] += 1
                if all(pieces.values()):
                    started.set()

        session.subscribe(counted)
        frames = [0]
        waiting: dict = {}
        display = App._display

        def _display(self, screen, renderable) -> None:  # after the terminal's escapes
            display(self, screen, renderable)
            if renderable is None:
                return
            frames[0] += 1
            if waiting and app.prompt_input.text == waiting["text"]:
                waiting["shown"] = perf()
                waiting["event"].set()

        App._display = _display
        frame_cpu: list[float] = []  # CPU seconds of each screen update (layout + paint)
        originals = {name: getattr(Screen, name) for name in ("_refresh_layout", "_compositor_refresh")}
        nested = [0]

        def timed(name):
            def run(self, *args, **kwargs):
                t0 = time.thread_time()
                nested[0] += 1
                try:
                    return originals[name](self, *args, **kwargs)
                finally:
                    nested[0] -= 1
                    if not nested[0]:
                        frame_cpu.append(time.thread_time() - t0)
            return run

        for name in originals:
            setattr(Screen, name, timed(name))
        prompt = app.prompt_input
        edit = prompt.edit

        def edited(*args, **kwargs):
            result = edit(*args, **kwargs)
            if waiting and "handled" not in waiting:
                waiting["handled"] = perf()
            return result

        prompt.edit = edited
        prompt.focus()
        turns = [await session.say(agent, "Keep going, at length.") for agent in streamers]
        await asyncio.wait_for(started.wait(), 120)
        await asyncio.sleep(WARM)

        key_times: list[float] = []
        handled: list[float] = []
        tree_times: list[float] = []
        row_times: list[float] = []
        typed = prompt.text
        refresh_agents = app.agent_tree.refresh_agents

        def timed_rows(*args, **kwargs):
            t0 = perf()
            refresh_agents(*args, **kwargs)
            row_times.append(perf() - t0)

        async def type_keys() -> None:
            nonlocal typed
            for ch in itertools.islice(itertools.cycle("abcdefghijklmnopqrstuvwxyz"), keys):
                typed += ch
                waiting.update(text=typed, event=asyncio.Event())
                waiting.pop("handled", None)
                t0 = perf()
                app._driver.send_message(events.Key(ch, ch))
                await asyncio.wait_for(waiting["event"].wait(), 10)
                key_times.append(waiting["shown"] - t0)
                handled.append(waiting.get("handled", waiting["shown"]) - t0)
                waiting.clear()
                await asyncio.sleep(KEY_EVERY)

        async def refresh_tree(done: asyncio.Event) -> None:
            app.agent_tree.refresh_agents = timed_rows
            try:
                while not done.is_set():
                    t0 = perf()
                    app._show_status()
                    tree_times.append(perf() - t0)
                    await asyncio.sleep(TREE_EVERY)
            finally:
                del app.agent_tree.refresh_agents

        counted_before = sum(pieces.values())
        frames_before = frames[0]
        done = asyncio.Event()
        del frame_cpu[:]
        cpu_start = time.process_time()
        t_start = perf()
        async with LagProbe() as probe:
            refresher = asyncio.create_task(refresh_tree(done))
            await type_keys()
            done.set()
            await refresher
        seconds = perf() - t_start
        cpu = time.process_time() - cpu_start
        updates = [t for t in frame_cpu if t > 0.0005]  # those that laid out or painted
        chunks = sum(pieces.values()) - counted_before
        frames_run = frames[0] - frames_before
        live = [p for p in panes if p.agent_id in shown and p.scrollback._stream is not None]
        if len(live) != len(shown):
            problems.append(f"workbench: {len(shown) - len(live)} shown pane(s) of a streaming "
                            "agent had no stream at the end")
        Streams.stop()
        await asyncio.gather(*turns)
        await session.wait_idle()
        if prompt.text != typed:
            problems.append("workbench: the input does not hold the keys typed")
        slow = [a for a, n in pieces.items() if n < 0.5 * (seconds + WARM) / PIECE_EVERY]
        if slow:
            problems.append(f"workbench: {len(slow)} agent(s) streamed at under half the pace asked "
                            f"({1 / PIECE_EVERY:.0f} pieces a second each): the loop did not keep up")
        App._display = display
        for name, method in originals.items():
            setattr(Screen, name, method)
        return {
            "key_median": statistics.median(key_times), "key_p95": quantile(key_times, 0.95),
            "key_worst": max(key_times), "key_handled_median": statistics.median(handled),
            "keys": len(key_times), "streaming": len(streamers), "chunks": chunks,
            "chunks_per_s": chunks / seconds, "frames": frames_run, "seconds": seconds,
            "tree_median": statistics.median(tree_times), "tree_p95": quantile(tree_times, 0.95),
            "tree_worst": max(tree_times), "tree_calls": len(tree_times),
            "rows_median": statistics.median(row_times) if row_times else 0.0,
            "stall": probe.longest_ms / 1e3, "stalls_over_16": len(probe.over(16)),
            "stalls_over_50": len(probe.over(50)), "problems": problems,
            "cpu_share": cpu / seconds, "frame_cpu_median": statistics.median(updates),
            "frame_cpu_total": sum(frame_cpu) / seconds,
        }


def main(argv: list[str]) -> None:
    report(asyncio.run(drive(argv[0], int(argv[1]))))


if __name__ == "__main__":
    main(sys.argv[1:])
