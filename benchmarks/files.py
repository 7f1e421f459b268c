"""The file tools (issue 25 item 1). benchmarks/run.py prints this line after its own
figures.

  search_files_10k_vs_grep  search_files (core/tools/files.py: the walk through folder
        descriptors, the .gitignore rules, each file read once and searched once) over a
        tree of 10,000 text files in 100 folders (~2 KB each, a .gitignore at the top and
        one folder it ignores), over `grep -rn` of the same pattern on the same tree, run
        as a child process (its start included, as a tool's would be). Both find the same
        matches (checked). Interleaved, one untimed warm-up each (which fills the OS
        cache), medians of 7. Goal: <= 2x.
"""

from __future__ import annotations

import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from figure import fmt, main  # noqa: E402
from ikigai_tui.core.tools.files import search  # noqa: E402
from ikigai_tui.core.tools.workspace import Workspace  # noqa: E402

FILES = 10_000
FOLDERS = 100
RUNS = 7
GOAL = 2.0
PATTERN = r"needle_[0-9]+"
LINE = "def handler(request, response):  # the orders service answers here, row locks held\n"


def make_tree(root: Path) -> int:
    """The tree; how many lines match PATTERN (one file in 50 holds one)."""
    (root / ".gitignore").write_text("ignored/\n*.tmp\n")
    (root / "ignored").mkdir()
    (root / "ignored" / "x.txt").write_text("needle_0 in an ignored folder\n")
    matches = 0
    for n in range(FILES):
        folder = root / f"pkg{n % FOLDERS:03d}"
        folder.mkdir(exist_ok=True)
        body = LINE * 24
        if n % 50 == 0:
            body += f"    return needle_{n}\n"
            matches += 1
        (folder / f"mod{n:05d}.py").write_text(body)
    return matches


def _grep(root: Path) -> int:
    done = subprocess.run(["grep", "-rn", "-E", PATTERN, ".", "--exclude-dir=ignored",
                           "--exclude-dir=.git"], cwd=root, capture_output=True, text=True)
    return done.stdout.count("\n")


def figures(quick: bool = False) -> Iterator[str]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        expected = make_tree(root)
        ws = Workspace(root)
        pattern = re.compile(PATTERN, re.MULTILINE)
        found, more = search(ws, pattern, "**/*", limit=FILES)
        assert len(found) == expected and not more, (len(found), expected)
        assert _grep(root) == expected
        ours: list[float] = []
        theirs: list[float] = []
        for _ in range(RUNS):
            t = time.perf_counter()
            search(ws, pattern, "**/*", limit=FILES)
            ours.append(time.perf_counter() - t)
            t = time.perf_counter()
            _grep(root)
            theirs.append(time.perf_counter() - t)
    a, b = statistics.median(ours), statistics.median(theirs)
    ratio = a / b
    yield fmt("search_files_10k_vs_grep", f"{ratio:.2f}x", f"<= {GOAL:g}x", ratio <= GOAL,
              f"search_files {a * 1e3:.0f} ms, grep -rn {b * 1e3:.0f} ms, medians of {RUNS}; "
              f"{FILES:,} files, {expected} matches")


if __name__ == "__main__":
    main(figures)
