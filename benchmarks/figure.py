"""What the figure modules share: the figure line, the `RESULT {json}` line by which a
child process hands its measurements to its parent, and the command line of a module run
alone. Standard library only: a child imports it before what it times (tui_drive.py's T0).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator


def fmt(name: str, measured: str, goal: str, ok: bool, details: str) -> str:
    """One figure: `name: measured (goal) ok|miss   [details]`, as `make bench` prints it."""
    return f"{name}: {measured} ({goal}) {'ok' if ok else 'miss'}   [{details}]"


def report(result: dict) -> None:
    """A child's measurements, as the one line its parent reads (run_child)."""
    print("RESULT " + json.dumps(result), flush=True)


def run_child(argv: list[str], timeout: float = 600) -> tuple[dict | None, str]:
    """Run a child (`python` + argv) to its end, without NO_COLOR and TEXTUAL_THEME (read at
    Textual's import); (its RESULT, "") or (None, why not: its exit code, its last lines)."""
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TEXTUAL_THEME")}
    proc = subprocess.run([sys.executable, *argv], capture_output=True, text=True,
                          timeout=timeout, env=env)
    for text in proc.stdout.splitlines():
        if text.startswith("RESULT "):
            return json.loads(text[7:]), ""
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
    return None, f"exited {proc.returncode}: {' | '.join(tail)}"


def main(figures: Callable[..., Iterator[str]], child: Callable[..., None] | None = None) -> None:
    """`python benchmarks/MODULE.py [--quick]` prints the module's figures as `make bench`
    does; `MODULE.py --child ARGS...` is the module's child side (with `child`)."""
    if child is not None and sys.argv[1:2] == ["--child"]:
        child(*sys.argv[2:])
        return
    for text in figures(quick="--quick" in sys.argv):
        print(text, flush=True)
