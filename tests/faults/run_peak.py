"""The peak memory of a whole `ikigai run`, as `/usr/bin/time -v` gives it: one message
on standard input, the offline model declared large enough to take it, the process's
high-water mark of resident memory (VmHWM, read as it exits: unlike wait4's ru_maxrss it
leaves out what the process held before its exec, here a copy of the test's or the
bench's memory). Linux only. Used by tests/faults/test_big_messages.py and `make bench`
(benchmarks/big_message.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

MiB = 1 << 20
REPO = Path(__file__).resolve().parents[2]


# `python -c LAUNCH OUT ARGS...`: ikigai ARGS, then its VmHWM (KiB) written to OUT.
LAUNCH = """
import atexit, runpy, sys
out = sys.argv.pop(1)
def peak():
    with open("/proc/self/status") as status:
        kib = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
    with open(out, "w") as handle:
        handle.write(kib)
atexit.register(peak)
sys.argv[0] = "ikigai"
runpy.run_module("ikigai_tui", run_name="__main__", alter_sys=True)
"""


def measurable() -> bool:
    return os.path.exists("/proc/self/status")


def run_peak_mib(folder: Path, name: str, text: str) -> tuple[float, int, str]:
    """`ikigai --db FOLDER/NAME.db run` reading `text` (one line) on stdin: (peak RSS in
    MiB, exit status, its standard output)."""
    config = folder / "config.toml"
    # The window off and a limit past ~3 million tokens: the message is taken whole.
    config.write_text('[models."offline"]\nmax_input_tokens = 10_000_000\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith("IKIGAI_")}
    env.update(IKIGAI_CONFIG=str(config), IKIGAI_OFFLINE_DELAY="0",
               IKIGAI_SLIDING_CONTEXT_TOKENS="0", HOME=str(folder),
               XDG_DATA_HOME=str(folder / "data"), XDG_CONFIG_HOME=str(folder / "config"))
    source, out, peak = (folder / f"{name}.{ext}" for ext in ("txt", "out", "peak"))
    source.write_text(text + "\n", encoding="utf-8")
    with open(source, "rb") as stdin, open(out, "wb") as stdout:
        code = subprocess.run([sys.executable, "-c", LAUNCH, str(peak), "--db",
                               str(folder / f"{name}.db"), "run"],
                              stdin=stdin, stdout=stdout, stderr=subprocess.DEVNULL,
                              env=env, cwd=REPO, timeout=300).returncode
    return int(peak.read_text()) / 1024, code, out.read_text(encoding="utf-8")


def peak_over_tiny_mib(folder: Path, text: str) -> tuple[float, float, float]:
    """(the big run's peak above a one-word run's, the big peak, the tiny peak), in MiB."""
    tiny, code, _ = run_peak_mib(folder, "tiny", "hello")
    assert code == 0
    big, code, out = run_peak_mib(folder, "big", text)
    assert code == 0 and out.startswith("Offline model here."), out[:200]
    return big - tiny, big, tiny
