"""Benchmarks of event-loop stalls in the full-screen app: the longest time the screen
froze (a loop-lag probe, benchmarks/stall.py: a task on the app's own loop sleeping 5 ms
again and again; a wake-up later than asked is a stall of that lateness) while the user
sends a first message, a reply streams, or the view jumps. benchmarks/run.py prints these
lines after its own figures.

  stall_first_send_cold_ms   Enter on the first message to a real provider (openai/gpt-4o,
                             the loopback fake of tests/fakes, through real litellm) at once
                             after the first frame: litellm is loading (the app's preload,
                             or the request itself), in litellm's own thread. Until the
                             reply is in.
  stall_first_send_warm_ms   The same once the preload is done (litellm, the SDK's
                             resources and the tokenizer loaded).
  enter_to_wire_warm_ms      That warm send: the Enter key event to the request reaching
                             the fake provider.
  stall_first_send_cold_anthropic_ms   The cold send to anthropic/claude-sonnet-4-5 (the
                             fake's Anthropic wire format): litellm's paths for a model
                             without a tiktoken encoding of its own (its default one).
  stall_stream_ms            A 10,000-chunk reply streamed at the end of the 100,000-message
                             transcript, a paint per chunk (the stream figure's scenario),
                             until 0.3 s after it ends (the collection it put off runs then).
  stall_jump_ms              Ctrl+Home and Ctrl+End on logs of 2,000, 10,000 and 100,000
                             messages, from the key until the page is all drawn (the part
                             off screen is drawn after the frame, in slices); the worst.
  ctrl_home_median_ms        Ctrl+Home: the key event to the frame that shows the start,
  ctrl_end_median_ms         Ctrl+End: to the frame that shows the end; the median of each
                             size, the worst size shown (every size in the details).

Each scenario is a cold child process (`python benchmarks/stall_drive.py MODE ...`) on a
copy of the databases benchmarks/tui.py generates; the app runs headless at 120x40.
Stall figures are the median over the runs of each run's longest stall.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import gen  # noqa: E402
import tui  # noqa: E402

STALL_GOAL_MS = 50.0
JUMP_GOAL_MS = 30.0
WIRE_GOAL_MS = 30.0
SIZES = (2_000, 10_000, 100_000)
DRIVER = HERE / "stall_drive.py"
ANTHROPIC = "anthropic/claude-sonnet-4-5"  # no tiktoken encoding of its own: litellm's default


def fmt(name: str, ms: float, goal: float, details: str) -> str:
    return f"{name}: {ms:.0f} ms (<= {goal:g} ms) {'ok' if ms <= goal else 'miss'}   [{details}]"


def child(args: list[str]) -> dict:
    saved = tui.DRIVER
    tui.DRIVER = DRIVER
    try:
        return tui.child(args)
    finally:
        tui.DRIVER = saved


def label(n: int) -> str:
    return f"{n // 1000}k"


def figures(quick: bool = False) -> Iterator[str]:
    problems: list[str] = []
    tmp = gen.DATA / f"tmp-stall-{os.getpid()}"
    tmp.mkdir(parents=True, exist_ok=True)
    try:
        dbs = {n: tui.ensure_db(n) for n in (0, *SIZES)}
        copies = {}
        for n, path in dbs.items():
            copies[n] = tmp / f"{n}.db"
            shutil.copyfile(path, copies[n])

        runs = 2 if quick else 3
        try:
            sends = {mode: [] for mode in ("cold", "warm", "cold_anthropic")}
            for _ in range(runs):
                for mode in sends:
                    db = tmp / f"send-{mode}-{len(sends[mode])}.db"  # new: its root on the model
                    args = ["send", mode.partition("_")[0], str(db)]
                    if mode == "cold_anthropic":
                        args.append(ANTHROPIC)
                    result = child(args)
                    problems.extend(result["problems"])
                    sends[mode].append(result)
            for mode in ("cold", "warm", "cold_anthropic"):
                longest = [r["longest_ms"] for r in sends[mode]]
                yield fmt(f"stall_first_send_{mode}_ms", statistics.median(longest), STALL_GOAL_MS,
                          f"runs {', '.join(f'{x:.0f}' for x in longest)} ms; stalls over 20 ms "
                          f"in the first run: {sends[mode][0]['stalls']}; Enter to reply in "
                          f"{statistics.median(r['total'] for r in sends[mode]) * 1e3:.0f} ms")
            wires = [r["wire"] * 1e3 for r in sends["warm"] if r["wire"] is not None]
            if wires:
                yield fmt("enter_to_wire_warm_ms", statistics.median(wires), WIRE_GOAL_MS,
                          f"runs {', '.join(f'{x:.1f}' for x in wires)} ms (cold: "
                          f"{statistics.median(r['wire'] * 1e3 for r in sends['cold']):.0f} ms)")
        except Exception as exc:  # report and go on
            problems.append(f"send figures: {exc}")

        try:
            streams = [child(["stream", str(copies[0]), str(copies[100_000])]) for _ in range(runs)]
            longest = [r["longest_ms"] for r in streams]
            yield fmt("stall_stream_ms", statistics.median(longest), STALL_GOAL_MS,
                      f"runs {', '.join(f'{x:.0f}' for x in longest)} ms; 10,000 chunks at the "
                      f"end of 100,000 messages; stalls over 20 ms in the first run: "
                      f"{streams[0]['stalls'][:10]}; after the reply ended "
                      f"{max(r['after_end_ms'] for r in streams):.0f} ms at most; median chunk "
                      f"{statistics.median(r['median_chunk'] for r in streams) * 1e6:.0f} us")
        except Exception as exc:
            problems.append(f"stream stall figure: {exc}")

        try:
            jumps = {n: child(["jumps", str(copies[n]), str(3 if quick else 5)]) for n in SIZES}
            for n, result in jumps.items():
                problems.extend(f"{label(n)}: {p}" for p in result["problems"])
            worst = {n: max(max(r["stalls"]["ctrl+home"]), max(r["stalls"]["ctrl+end"]))
                     for n, r in jumps.items()}
            yield fmt("stall_jump_ms", max(worst.values()), STALL_GOAL_MS,
                      ", ".join(f"{label(n)} {ms:.0f}" for n, ms in worst.items())
                      + " ms (the longest stall of any Ctrl+Home or Ctrl+End, key to all drawn)")
            for key, name in (("ctrl+home", "ctrl_home_median_ms"), ("ctrl+end", "ctrl_end_median_ms")):
                medians = {n: statistics.median(r["times"][key]) * 1e3 for n, r in jumps.items()}
                yield fmt(name, max(medians.values()), JUMP_GOAL_MS,
                          ", ".join(f"{label(n)} {ms:.1f}" for n, ms in medians.items())
                          + f" ms; key event to the painted frame; {len(jumps[SIZES[0]]['times'][key])}"
                          " presses a size")
        except Exception as exc:
            problems.append(f"jump figures: {exc}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for text in problems:
        yield f"CHECK FAILED: {text}"


if __name__ == "__main__":
    for text in figures(quick="--quick" in sys.argv):
        print(text, flush=True)
