"""Opening a log as a user does, measured from outside: the real program (`python -m
ikigai_tui --db DB --model MODEL --api-base URL`) in a pseudo-terminal of 120x40, with an
API key in its environment and the loopback fake provider of tests/fakes/server.py at
URL, its screen read as the terminal gets it. benchmarks/open_stall.py's figures are
made of these opens.

One open (`open_once`) gives, in seconds of time.perf_counter (CLOCK_MONOTONIC, the same
clock in every process):

  start        the app's start: create_app called (after the imports, which
               benchmarks/tui.py measures), noted by open_real_launch.py
  paint        the first output showing the conversation (words of the log's last message)
  ready        the first output whose gauge shows an exact count (`Sent: 12.3K ...`,
               not `Sent: …` nor `Sent: ~12.3K`; on the offline model, whose
               counts are estimates, `~12.3K`); then the program is left
               `linger` seconds (AFTER_READY unless asked) and quit with Ctrl+Q
  rss          the process's VmRSS at ready (from /proc), MiB; rss_end: when it is quit
  stall_ms     the longest event-loop stall from the start to ready + AFTER_READY (the
               probe of benchmarks/stall.py on the program's own loop); before / after
               the first frame; stall_later_ms: from then until it is quit
  litellm      whether litellm was imported by the time it was quit

  python benchmarks/open_real.py [N ...] [--offline] [--no-key]
        each open of logs of N messages (2,000, 10,000 and 100,000 by default), the first
        (counting and keeping the token counts) and 3 more
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import shutil
import signal
import sqlite3
import statistics
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

from ikigai_tui.core.tokens.words import SENT_LABEL

perf = time.perf_counter
HERE = Path(__file__).resolve().parent
LAUNCH = HERE / "open_real_launch.py"
SIZE = (120, 40)
AFTER_READY = 0.5
FAKE_KEY = "sk-bench-fake-key-0123456789abcdef"  # the fake provider takes any key
_ESCAPE = re.compile(rb"\x1b(?:\[[0-9;?<>=]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
# The gauge's line (core/tokens/words.sent_line): a figure once the context is counted.
_GAUGE = SENT_LABEL.encode() + b": "
COUNTED = {True: re.compile(re.escape(_GAUGE) + rb"\d"),
           False: re.compile(re.escape(_GAUGE) + rb"~?\d")}


def screen_text(raw: bytes) -> bytes:
    """The text of terminal output: its escape sequences (colours, moves) taken out."""
    return _ESCAPE.sub(b"", raw)


def prepare(source: Path, path: Path, model: str) -> Path:
    """A copy of the log `source` at `path`, its agents on `model`."""
    shutil.copyfile(source, path)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE agents SET model = ?", (model,))
    db.close()
    return path


def last_words(db: Path, count: int = 4) -> list[bytes]:
    """Long words from the end of the log's last message: its first frame shows them."""
    with sqlite3.connect(db) as conn:
        payload = conn.execute("SELECT payload FROM events ORDER BY id DESC LIMIT 1").fetchone()[0]
    conn.close()
    words = re.findall(r"[A-Za-z]{7,}", json.loads(payload).get("content", ""))
    return [w.encode() for w in dict.fromkeys(reversed(words))][:count]


def vm_rss_mb(pid: int) -> float | None:
    try:
        for text in Path(f"/proc/{pid}/status").read_text().splitlines():
            if text.startswith("VmRSS:"):
                return int(text.split()[1]) / 1024
    except OSError:
        return None
    return None


def program_env(folder: Path, stalls: Path, key: bool) -> dict[str, str]:
    """The program's environment: a user's with a key (or none), everything it writes
    besides the log (config, state, logs) in `folder`."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("NO_COLOR", "TEXTUAL_THEME", "OPENAI_API_KEY")}
    env |= {"TERM": "xterm-256color", "COLUMNS": str(SIZE[0]), "LINES": str(SIZE[1]),
            "OPEN_REAL_STALLS": str(stalls), "IKIGAI_CONFIG": str(folder / "no-config.toml"),
            "XDG_CONFIG_HOME": str(folder / "config"), "XDG_STATE_HOME": str(folder / "state"),
            "XDG_DATA_HOME": str(folder / "data"), "XDG_CACHE_HOME": str(folder / "cache")}
    if key:
        env["OPENAI_API_KEY"] = FAKE_KEY
    return env


def open_once(db: Path, model: str, api_base: str, folder: Path, *, key: bool = True,
              linger: float = AFTER_READY, timeout: float = 120.0) -> dict:
    """One run of the real program on `db` (see the module's docstring)."""
    stalls_path = folder / f"stalls-{os.getpid()}.json"
    stalls_path.unlink(missing_ok=True)
    words = last_words(db)
    counted = COUNTED[model != "offline"]  # the offline model's counts are estimates
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", SIZE[1], SIZE[0], 0, 0))
    result: dict = {"spawned": perf(), "paint": None, "ready": None, "rss": None,
                    "rss_end": None, "quit": None}
    proc = subprocess.Popen(
        [sys.executable, str(LAUNCH), "--db", str(db), "--model", model, "--api-base", api_base],
        stdin=slave, stdout=slave, stderr=slave, env=program_env(folder, stalls_path, key),
        start_new_session=True, close_fds=True)
    os.close(slave)
    tail = b""
    deadline = result["spawned"] + timeout
    try:
        while perf() < deadline and proc.poll() is None:
            if select.select([master], [], [], 0.005)[0]:
                try:
                    chunk = os.read(master, 1 << 16)
                except OSError:  # EIO: the program has ended
                    break
                now = perf()
                tail = (tail + screen_text(chunk))[-8192:]
                if result["paint"] is None and all(w in tail for w in words):
                    result["paint"] = now
                if result["ready"] is None and counted.search(tail):
                    result["ready"] = now
                    result["rss"] = vm_rss_mb(proc.pid)
            if result["ready"] is not None and result["quit"] is None \
                    and perf() >= result["ready"] + linger:
                result["rss_end"] = vm_rss_mb(proc.pid)
                result["quit"] = perf()
                os.write(master, b"\x11")  # Ctrl+Q
                deadline = min(deadline, perf() + 10)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        os.close(master)
    record = json.loads(stalls_path.read_text()) if stalls_path.exists() else {}
    stalls_path.unlink(missing_ok=True)
    if result["ready"] is None:  # what the screen said last (an error, say)
        result["tail"] = tail[-300:].decode("utf-8", "replace")
    result["start"] = record.get("start")
    result["litellm"] = record.get("litellm")
    if result["ready"] is not None and result["start"] is not None:
        end = result["ready"] + AFTER_READY
        stalls = record.get("stalls", [])
        paint = result["paint"] or end

        def longest(lo: float, hi: float) -> float:
            return max((ms for t, ms in stalls if lo <= t < hi), default=0.0)

        result["stall_ms"] = longest(0.0, end)
        result["stall_before_paint_ms"] = longest(0.0, paint)
        result["stall_after_paint_ms"] = longest(paint, end)
        result["stall_later_ms"] = longest(end, result["quit"] or end)
    return result


def fake_provider():
    """The loopback fake provider of tests/fakes/server.py (the repository's root on the
    path, as `make bench` runs without it), started: use it as a context manager."""
    if str(HERE.parent) not in sys.path:
        sys.path.insert(0, str(HERE.parent))
    from tests.fakes.server import FakeProvider

    return FakeProvider()


def since_start(result: dict, key: str) -> float | None:
    """A moment of `result` in seconds from the app's start."""
    if result.get(key) is None or result.get("start") is None:
        return None
    return result[key] - result["start"]


def main(argv: list[str]) -> None:
    import tempfile

    sys.path.insert(0, str(HERE))
    import tui

    sizes = [int(a) for a in argv if a.isdigit()] or [2_000, 10_000, 100_000]
    model = "offline" if "--offline" in argv else "openai/gpt-4o"
    key = "--no-key" not in argv
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    with fake_provider() as fake, tempfile.TemporaryDirectory(dir=tui.gen.DATA) as tmp:
        folder = Path(tmp)
        for n in sizes:
            db = prepare(tui.ensure_db(n), folder / f"{n}.db", model)
            runs = [open_once(db, model, fake.openai_base, folder, key=key) for _ in range(4)]
            for r in runs:
                print(f"{n:>7,} {model}: first frame {since_start(r, 'paint') or float('nan'):.3f} s, "
                      f"ready {since_start(r, 'ready') or float('nan'):.2f} s (from the spawn "
                      f"{(r['ready'] or float('nan')) - r['spawned']:.2f} s), RSS "
                      f"{r['rss'] or float('nan'):.0f} MiB, longest stall "
                      f"{r.get('stall_ms', float('nan')):.0f} ms", flush=True)
            good = [r for r in runs[1:] if r["ready"] is not None]
            if good:
                print(f"{n:>7,} median of the opens after the first: ready "
                      f"{statistics.median(since_start(r, 'ready') for r in good):.2f} s, RSS "
                      f"{statistics.median(r['rss'] for r in good):.0f} MiB, stall "
                      f"{statistics.median(r['stall_ms'] for r in good):.0f} ms; requests to "
                      f"the provider {len(fake.requests)}", flush=True)
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
