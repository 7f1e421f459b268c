"""Memory of one big message, stored and sent (issue 10, item 12). benchmarks/run.py
prints these lines after its own figures.

  big_message_10mb_peak_above_idle_mib   Peak RSS above the idle program while `ikigai
        run` reads a 10 MiB message on stdin, stores it, sends it through real litellm
        (openai/gpt-4o, exact tiktoken counts) to the loopback fake provider of
        tests/fakes, and stores the reply. Goal: <= 100 MiB.
  big_message_1mb_peak_above_idle_mib    The same with 1 MiB (informational; not --quick).
  big_message_10mb_wide_peak_above_idle_mib  The same 10 MiB of UTF-8 with one character
        above U+FFFF in it, so Python holds every copy of the text at 4 bytes a character
        instead of 1 (informational; not --quick).
  big_message_10mb_run_over_tiny_mib   Measured as a user would with `/usr/bin/time -v`
        (issue 23, item 14): the peak RSS of a whole `ikigai run` reading the 10 MiB
        message on the offline model (declared to take it, the window off), minus that
        of the same run reading "hello" (tests/faults/run_peak.py, VmHWM as it exits).
        Goal: <= 100 MiB (157 before the offline model quoted only the message's start
        and the store stopped holding its JSON text whole). With the wide message beside
        it (informational; not --quick).

How it is measured. A child process imports litellm as the program does, then runs the
real command line in-process twice (ikigai_tui.cli.main, same database): first `run`
with one short message, so that what any first request loads is loaded (the model's
tokenizer, litellm's lazily imported modules and HTTP client): the program as it idles
between messages; then `run` reading the big message, one line, from its stdin.
  idle = VmRSS just after the second run has opened its session (after gc.collect());
  peak = VmHWM when that run returns, the high-water mark having been reset at idle
         (writing "5" to /proc/self/clear_refs);
  figure = peak - idle, in MiB.
The details also give what the first, short run cost above its own session open (the
one-off loads the idle figure excludes). The fake provider runs in this process, so its
copies of the request are not counted; the run's output goes to a file. Each run checks
that the provider received, and the database holds, the message exactly (CHECK FAILED
otherwise). Linux only (/proc); elsewhere the lines say so.

The message: on one line, words of a 20,000-word vocabulary with Latin-1 letters (é, ü,
ß, ñ), 16-digit hex ids, numbers, timestamps, quotes and backslashes, like a pasted log;
every character within Latin-1, so one byte a character in Python. Many distinct words
are the hard case for the full-text index.
"""

from __future__ import annotations

import json
import os
import random
import re
import sqlite3
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

from figure import fmt, main

REPO = Path(__file__).resolve().parents[1]
MODEL = "openai/gpt-4o"
GOAL_MIB = 100.0
MiB = 1 << 20


def message(size: int, wide: bool = False, seed: int = 5) -> str:
    """`size` bytes of UTF-8 on one line (see the module's docstring)."""
    rng = random.Random(seed)
    syllables = ["ka", "lo", "mi", "ne", "ro", "su", "ta", "vi", "da", "pe", "qu", "zo",
                 "é", "ü", "ß", "ñ", "th", "er"]
    vocabulary = ["".join(rng.choice(syllables) for _ in range(rng.randint(1, 4)))
                  for _ in range(20_000)]
    vocabulary += ["the", "a", "to", "of", "and", "in", "is", "error:", "(x)", "{}",
                   "'quoted'", '"json"', "->", "==", "C:\\temp\\file", "a/b"]
    words: list[str] = ["begin"]
    n = 5
    while n < size:
        pick = rng.random()
        if pick < 0.08:
            word = f"{rng.getrandbits(64):016x}"
        elif pick < 0.16:
            word = str(rng.randint(0, 10 ** rng.randint(1, 9)))
        elif pick < 0.18:
            word = (f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T"
                    f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}")
        else:
            word = rng.choice(vocabulary)
        words.append(word)
        n += len(word.encode()) + 1
    if wide:
        words.insert(len(words) // 2, "\U0001f600")
    data = " ".join(words).encode()[:size].decode("utf-8", "ignore")
    return data.rstrip() + "x" * (size - len(data.rstrip().encode()))


# -- the child: the measured process ----------------------------------------------------------


def _status(key: str) -> float:
    text = Path("/proc/self/status").read_text()
    found = re.search(rf"{key}:\s+(\d+)", text)
    assert found is not None, key
    return int(found.group(1)) / 1024


def _reset_peak() -> None:
    Path("/proc/self/clear_refs").write_text("5")


def child(base: str, db: str, out: str) -> None:
    import gc

    from ikigai_tui.llm.litellm_import import import_litellm

    import_litellm()
    import ikigai_tui.cli.run as cli_run
    from ikigai_tui.cli import main

    opened: list[float] = []
    original = cli_run.open_session

    async def open_and_mark(*args, **kwargs):
        session = await original(*args, **kwargs)
        gc.collect()
        opened.append(_status("VmRSS"))
        _reset_peak()
        return session

    cli_run.open_session = open_and_mark
    short = Path(db + ".short.txt")
    short.write_text("hello\n")
    argv = ["--db", db, "--model", MODEL, "--api-base", base, "run"]
    first = main([*argv, "--script", str(short)])
    first_peak = _status("VmHWM")
    rc = main(argv)  # the big message, from stdin
    peak = _status("VmHWM")
    Path(out).write_text(json.dumps({
        "rc": [first, rc], "idle": opened[-1], "peak": peak,
        "first_open": opened[0], "first_peak": first_peak,
    }))


# -- the parent ------------------------------------------------------------------------------


def measure(size: int, wide: bool = False) -> tuple[dict, list[str]]:
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))  # the fake provider lives in tests/fakes
    from tests.fakes.server import FakeProvider, Reply

    text = message(size, wide)
    problems: list[str] = []
    with tempfile.TemporaryDirectory() as tmp, FakeProvider() as fake:
        fake.queue(Reply(text="Hello."), Reply(text="Received."))
        db, out = f"{tmp}/big.db", f"{tmp}/out.json"
        # No model takes ~3 million tokens: this one is declared to (a message that cannot
        # fit the model's limit is refused before it is written).
        Path(f"{tmp}/config.toml").write_text(f'[models."{MODEL}"]\nmax_input_tokens = 10_000_000\n')
        env = dict(os.environ, OPENAI_API_KEY="bench-key", HOME=tmp, XDG_DATA_HOME=tmp,
                   XDG_CONFIG_HOME=tmp, IKIGAI_CONFIG=f"{tmp}/config.toml")
        with open(f"{tmp}/stdout", "wb") as stdout, open(f"{tmp}/stderr", "wb") as stderr:
            proc = subprocess.Popen(
                [sys.executable, __file__, "--child", fake.openai_base, db, out],
                stdin=subprocess.PIPE, stdout=stdout, stderr=stderr, env=env, cwd=REPO)
            data = text.encode() + b"\n"

            def feed() -> None:
                assert proc.stdin is not None
                try:
                    proc.stdin.write(data)
                    proc.stdin.close()
                except BrokenPipeError:
                    pass

            threading.Thread(target=feed, daemon=True).start()
            code = proc.wait(timeout=600)
        if code != 0 or not Path(out).exists():
            tail = Path(f"{tmp}/stderr").read_text(errors="replace")[-500:]
            return {}, [f"big message child exited {code}: {tail}"]
        result = json.loads(Path(out).read_text())
        if result["rc"] != [0, 0]:
            problems.append(f"big message runs exited {result['rc']}")
        sent = [m["content"] for m in fake.requests[-1].body["messages"] if m["role"] == "user"]
        if sent[-1:] != [text]:
            problems.append("the provider did not receive the big message exactly")
        with sqlite3.connect(db) as conn:
            stored = [json.loads(p)["content"] for (p,) in conn.execute(
                "SELECT payload FROM events WHERE kind = 'user' ORDER BY id")]
        if stored[-1:] != [text]:
            problems.append("the database does not hold the big message exactly")
    result["chars"] = len(text)
    return result, problems


def line(name: str, result: dict, size: int, informational: bool = False) -> str:
    above = result["peak"] - result["idle"]
    details = (f"{size / MiB:g} MiB UTF-8, {result['chars']:,} characters; peak "
               f"{result['peak']:.0f} MiB, idle {result['idle']:.0f} MiB; the first, short run "
               f"peaked {result['first_peak'] - result['first_open']:.0f} MiB above its session "
               f"open ({result['first_open']:.0f} MiB, litellm imported)")
    if informational:
        details += "; informational"
    return fmt(name, f"{above:.0f}", f"<= {GOAL_MIB:g}", above <= GOAL_MIB, details)


def run_figures(quick: bool) -> Iterator[str]:
    """big_message_10mb_run_over_tiny_mib (see the module's docstring)."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from tests.faults.run_peak import measurable, peak_over_tiny_mib

    name = "big_message_10mb_run_over_tiny_mib"
    if not measurable():
        yield f"{name}: not measured (needs Linux /proc)"
        return
    for wide in (False, True)[: 1 if quick else 2]:
        with tempfile.TemporaryDirectory() as tmp:
            above, big, tiny = peak_over_tiny_mib(Path(tmp), message(10 * MiB, wide))
        details = (f"whole `ikigai run` processes, offline model: peak {big:.0f} MiB, "
                   f"'hello' {tiny:.0f} MiB" + ("; one character past U+FFFF, informational"
                                                  if wide else ""))
        yield fmt(name.replace("10mb", "10mb_wide") if wide else name, f"{above:.0f}",
                  f"<= {GOAL_MIB:g}", above <= GOAL_MIB, details)


def figures(quick: bool = False) -> Iterator[str]:
    yield from run_figures(quick)
    if not os.access("/proc/self/clear_refs", os.W_OK):
        yield "big_message_10mb_peak_above_idle_mib: not measured (needs Linux /proc)"
        return
    runs = [("big_message_10mb_peak_above_idle_mib", 10 * MiB, False, False)]
    if not quick:
        runs += [("big_message_1mb_peak_above_idle_mib", MiB, False, True),
                 ("big_message_10mb_wide_peak_above_idle_mib", 10 * MiB, True, True)]
    problems: list[str] = []
    for name, size, wide, informational in runs:
        result, found = measure(size, wide)
        problems.extend(found)
        if result:
            yield line(name, result, size, informational)
    for text in problems:
        yield f"CHECK FAILED: {text}"


if __name__ == "__main__":
    main(figures, child)
