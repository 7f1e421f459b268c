"""Find in a pane (issue 27, Benchmark). benchmarks/run.py prints these lines after its own
figures.

  find_first_hit_ms  Ctrl+F over an agent that holds 100,000 messages (the benchmark log of
        gen.py: its grandchild, whose transcript is what it inherited plus its own): the
        time from a query typed to its hits known in transcript order (tui/find.py's
        Finder.find: the log's full-text index for its own messages, the inherited ones in
        memory), for one-, two- and three-word queries as typed (each prefix of a word is
        a query of its own), median and worst over all of them, in ms. Goal: the worst
        <= 100 ms.
  find_max_stall_ms  The longest the event loop was held meanwhile (a 2 ms ticker's worst
        lateness), in ms. Goal: <= 50 ms.
"""

from __future__ import annotations

import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import gen  # noqa: E402
from figure import fmt, main  # noqa: E402
from ikigai_tui.config import load  # noqa: E402
from ikigai_tui.runtime import close_session, open_session  # noqa: E402
from ikigai_tui.tui.find import Finder  # noqa: E402

N = 100_000
GOAL_MS = 100.0
STALL_MS = 50.0


def _queries(texts: list[str]) -> list[str]:
    """Queries as typed: every prefix of one, two and three words of the log's messages."""
    out: list[str] = []
    for text in texts:
        words = text.split()[:3]
        typed = ""
        for word in words:
            for end in range(1, len(word) + 1):
                out.append((typed + " " + word[:end]).strip())
            typed = (typed + " " + word).strip()
    return out


async def _measure(path: Path, quick: bool) -> tuple[list[float], float, int, list[str]]:
    config = load(config_path=str(path.parent / "none.toml"), env={}, db=str(path), model="offline")
    session = await open_session(config)
    try:
        leaf = list(session.tree)[-1]
        await session.replayer(leaf.id)
        samples = [e.payload.get("content", "") for e in await session.store.page(
            leaf.id, ["user"], limit=400) if isinstance(e.payload.get("content"), str)]
        texts = [t for t in samples if len(t.split()) >= 3][:: 40][: 2 if quick else 6]
        finder = Finder(session, leaf.id)
        await finder.find("warm")  # the inherited part read once, as the first keystroke does
        late = 0.0
        running = True

        async def ticker() -> None:
            nonlocal late
            while running:
                before = time.perf_counter()
                await asyncio.sleep(0.002)
                late = max(late, time.perf_counter() - before - 0.002)

        tick = asyncio.create_task(ticker())
        times: list[float] = []
        asked: list[str] = []
        hits = 0
        for query in _queries(texts):
            start = time.perf_counter()
            found, _more = await finder.find(query)
            times.append((time.perf_counter() - start) * 1000)
            asked.append(query)
            hits += bool(found)
        running = False
        await tick
        return times, late * 1000, hits, asked
    finally:
        await close_session(session)


def figures(quick: bool = False) -> Iterator[str]:
    gen.ensure(N)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "find.db"
        shutil.copy(gen.db_path(N), path)
        times, stall, hits, asked = asyncio.run(_measure(path, quick))
    worst, median = max(times), statistics.median(times)
    longer = [t for t, q in zip(times, asked) if len(q) > 1]
    yield fmt("find_first_hit_ms", f"{worst:.1f} ms", f"<= {GOAL_MS:g} ms", worst <= GOAL_MS,
              f"median {median:.1f} ms over {len(times)} queries as typed, {hits} with hits; "
              f"worst '{asked[times.index(worst)]}'; past the first letter: worst "
              f"{max(longer):.1f} ms; {N:,} messages")
    yield fmt("find_max_stall_ms", f"{stall:.1f} ms", f"<= {STALL_MS:g} ms", stall <= STALL_MS,
              "a 2 ms ticker's worst lateness while finding")


if __name__ == "__main__":
    main(figures)
