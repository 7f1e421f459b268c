"""The child side of benchmarks/stall_figures.py: each run of this script is one cold child
process that drives the full-screen app headless at 120x40 with a loop-lag probe
(benchmarks/stall.py) on the app's loop, and prints one `RESULT {json}` line.

  python benchmarks/stall_drive.py jumps DB ROUNDS     Ctrl+Home, Ctrl+End: key to the
                                                       frame that shows the destination, and
                                                       the longest stall until the page is
                                                       all drawn
  python benchmarks/stall_drive.py send cold|warm DB [MODEL]
                                                       the first message sent to a real
                                                       provider (the loopback fake, through
                                                       real litellm; openai/gpt-4o unless
                                                       MODEL): cold, at once after the
                                                       first frame (litellm loading); warm,
                                                       once the preload is done
  python benchmarks/stall_drive.py stream EMPTY BIG    the longest stall while a 10,000-chunk
                                                       reply streams (tui_drive's scenario),
                                                       until 0.3 s after it ends
  python benchmarks/stall_drive.py replies BIG N      RSS (MiB) and tracked objects after
                                                       every tenth of N streamed replies
                                                       (a leak check, by hand)
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from stall import LagProbe  # noqa: E402
from tui_drive import (  # noqa: E402
    SIZE, _open, _stream_chunks, report, settle, stream_chunks,
)

perf = time.perf_counter


async def settle_all(app, pilot) -> None:
    """settle(), then until the scrollback has drawn the rest of its page (its slices)."""
    sb = app.panes.active.scrollback
    for _ in range(2000):
        await settle(app, pilot)
        if not sb._undrawn:
            return
        await asyncio.sleep(0.002)


async def _jumps(db: str, rounds: int) -> dict:
    from textual import events

    from ikigai_tui.tui.app import IkigaiApp

    app, ready = await _open(db)
    done = asyncio.Event()
    action = IkigaiApp.action_scroll

    async def scrolled(self, how: str) -> None:
        await action(self, how)
        done.set()

    IkigaiApp.action_scroll = scrolled
    times: dict[str, list[float]] = {"ctrl+home": [], "ctrl+end": []}
    stalls: dict[str, list[float]] = {"ctrl+home": [], "ctrl+end": []}
    problems: list[str] = []
    async with app.run_test(size=SIZE) as pilot:
        await asyncio.wait_for(ready.wait(), 120)
        await settle_all(app, pilot)
        sb = app.panes.active.scrollback
        screen = app.screen
        for r in range(rounds + 1):  # the first round is a warm-up
            for key in ("ctrl+home", "ctrl+end"):
                done.clear()
                async with LagProbe() as probe:
                    t0 = perf()
                    app._driver.send_message(events.Key(key, None))
                    await asyncio.wait_for(done.wait(), 30)
                    screen._on_timer_update()  # the frame, painted now
                    shown = perf() - t0
                    await settle_all(app, pilot)
                if r:
                    times[key].append(shown)
                    stalls[key].append(probe.longest_ms)
                if key == "ctrl+home" and not (sb.at_start and sb.scroll_y == 0):
                    problems.append("jumps: ctrl+home did not show the start")
                if key == "ctrl+end" and not (sb.at_end and sb.scroll_y >= sb.max_scroll_y):
                    problems.append("jumps: ctrl+end did not show the end")
        await pilot.pause()
    return {"times": times, "stalls": stalls, "problems": sorted(set(problems))}


KEYS = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "gemini": "GEMINI_API_KEY"}


async def _send(mode: str, db: str, model: str = "openai/gpt-4o") -> dict:
    """Enter on a message to `model` (the loopback fake) until the reply is in."""
    provider = model.partition("/")[0]
    os.environ[KEYS[provider]] = "bench-key"
    from textual import events

    from tests.fakes.server import FakeProvider, Reply
    from ikigai_tui import config
    from ikigai_tui.core.notices import TurnFinished
    from ikigai_tui.llm import litellm_thread
    from ikigai_tui.runtime import create_app

    problems: list[str] = []
    with FakeProvider() as fake:
        wire: list[float] = []
        take = fake._take
        fake._take = lambda received: (wire.append(perf()), take(received))[1]
        fake.queue(Reply(text="a reply " * 200, chunk_size=12))
        base = fake.openai_base if provider == "openai" else fake.base_url
        cfg = config.load(db=db, model=model, api_base=base, env={},
                          config_path=str(Path(db).with_name("no-config.toml")))
        app = create_app(cfg)
        finished = asyncio.Event()
        async with app.run_test(size=SIZE) as pilot:
            app.session.listeners.append(
                lambda notice: finished.set() if isinstance(notice, TurnFinished) else None)
            await pilot.pause()
            if mode == "warm":
                for _ in range(3000):  # the preload, started after the first frame
                    if litellm_thread.preloaded(model):
                        break
                    await asyncio.sleep(0.01)
                else:
                    problems.append("send: the preload never finished")
                await asyncio.sleep(0.2)
            cold = "litellm" not in sys.modules or mode == "cold"
            app.prompt_input.load_text("hello there, a first message")
            async with LagProbe() as probe:
                t0 = perf()
                app._driver.send_message(events.Key("enter", None))
                await asyncio.wait_for(finished.wait(), 120)
                total = perf() - t0
            if not wire:
                problems.append("send: the request never reached the fake provider")
            await pilot.pause()
    return {"mode": mode, "litellm_loaded_before": not cold, "total": total,
            "wire": (wire[0] - t0) if wire else None, "longest_ms": probe.longest_ms,
            "stalls": [round(ms, 1) for _, ms in probe.over(20)], "problems": problems}


async def _stream_stall(empty_db: str, big_db: str) -> dict:
    """The stream figure's scenario (a 10,000-chunk reply at the end of the 100k transcript,
    a paint per chunk), with the probe on."""
    del empty_db
    app, ready = await _open(big_db)
    async with app.run_test(size=SIZE) as pilot:
        await asyncio.wait_for(ready.wait(), 120)
        await settle_all(app, pilot)
        sb = app.panes.active.scrollback
        await _stream_chunks(app, sb, stream_chunks(1_000, seed=99))  # warm-up
        sb.end_stream()
        await settle_all(app, pilot)
        async with LagProbe() as probe:
            times = await _stream_chunks(app, sb, stream_chunks(10_000, seed=1))
            await settle_all(app, pilot)
            ended = perf() - probe._t0
            sb.end_stream()
            await settle_all(app, pilot)
            await asyncio.sleep(0.3)  # what the reply's end set off (a collection put off)
            await settle_all(app, pilot)
        await pilot.pause()
    return {"longest_ms": probe.longest_ms, "median_chunk": statistics.median(times),
            "after_end_ms": max((ms for at, ms in probe.stalls if at >= ended), default=0.0),
            "stalls": [round(ms, 1) for _, ms in probe.over(20)], "problems": []}


async def _replies(big_db: str, replies: int) -> dict:
    """Memory across many streamed replies (by hand, not in make bench): RSS and the
    objects the collector tracks (frozen ones included) after every tenth reply of
    2,000 chunks at the end of the big transcript; flat when a reply leaves nothing."""
    import gc

    from tui_drive import vm_status

    app, ready = await _open(big_db)
    rss, tracked = [], []
    async with app.run_test(size=SIZE) as pilot:
        await asyncio.wait_for(ready.wait(), 120)
        await settle_all(app, pilot)
        sb = app.panes.active.scrollback
        for n in range(1, replies + 1):
            await _stream_chunks(app, sb, stream_chunks(2_000, seed=n))
            await settle_all(app, pilot)
            sb.end_stream()
            await settle_all(app, pilot)
            if n % 10 == 0:
                await asyncio.sleep(0.2)  # the collection the reply's end put off
                rss.append(round(vm_status()["VmRSS"], 1))
                tracked.append(len(gc.get_objects()) + gc.get_freeze_count())
        await pilot.pause()
    return {"rss_mib": rss, "tracked": tracked, "problems": []}


def main(argv: list[str]) -> None:
    mode = argv[0]
    if mode == "jumps":
        report(asyncio.run(_jumps(argv[1], int(argv[2]))))
    elif mode == "send":
        report(asyncio.run(_send(*argv[1:4])))
    elif mode == "stream":
        report(asyncio.run(_stream_stall(argv[1], argv[2])))
    elif mode == "replies":
        report(asyncio.run(_replies(argv[1], int(argv[2]))))
    else:
        raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
