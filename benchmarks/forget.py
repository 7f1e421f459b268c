"""/forget CRITERIA over a long context with the LLM matcher (issue 12). benchmarks/run.py
prints this line after its own figures.

  forget_10k_vs_ideal   A session on a fresh database holds 10,000 messages (5,000
        exchanges of ~250 characters a message). `/forget` runs the LLM matcher through
        real litellm against the loopback fake provider, run in a child process as a
        provider is (its parsing of 100 KB bodies is not this program's CPU), which
        answers every chunk's report_matches request 200 ms after it arrives; chunks are capped at 25,000 tokens,
        4 in flight (the defaults for concurrency). Time: from the command to its proposal
        (candidates built, chunks planned and counted, every request made and read).
        The context is measured first, as the gauge has it measured in the program.
        Ideal: ceil(chunks / 4) x 200 ms. One untimed run first (litellm's import and the
        first connection are start-up costs, not the matcher's). Median of 3.

Goal: <= 1.3x the ideal: the matcher adds little to the provider's own time, and the
chunks really run four at a time.
"""

from __future__ import annotations

import asyncio
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ikigai_tui.core.command_bus import Pending  # noqa: E402
from ikigai_tui.core.events import WriteBatch  # noqa: E402
from ikigai_tui.core.notices import MatchingNotice  # noqa: E402
from ikigai_tui.core.session import Session, SessionSettings  # noqa: E402
from ikigai_tui.core.sqlite.store import Store  # noqa: E402
from ikigai_tui.llm.providers import Providers  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

GOAL = 1.3
MESSAGES = 10_000
DELAY = 0.2
CHUNK_TOKENS = 25_000
IN_FLIGHT = 4
WORDS = ("the schema of orders and customers, an index on created_at, the weather in Lisbon, "
         "a jazz album for the evening, and how the deployment pipeline should be split up ")


CHILD = f"""
import sys, time
sys.path.insert(0, {str(ROOT)!r})
from tests.fakes.server import FakeProvider, Reply

def answer(received):
    time.sleep({DELAY})
    return Reply(tool_calls=[("report_matches", {{"matches": []}})], usage=(1000, 5))

with FakeProvider() as fake:
    fake.respond(answer)
    print(fake.port, flush=True)
    sys.stdin.read()
"""


async def _measure(reps: int) -> dict:
    os.environ.setdefault("OPENAI_API_KEY", "bench-key")
    child = subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        port = int(child.stdout.readline())
        return await _measure_on(f"http://127.0.0.1:{port}/v1", reps)
    finally:
        child.stdin.close()
        child.wait(timeout=10)


async def _measure_on(api_base: str, reps: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        store = await Store.open(Path(tmp) / "forget.db")
        providers = Providers(api_base=api_base, timeout=60, max_retries=0,
                              concurrency=IN_FLIGHT)
        settings = SessionSettings(model="openai/gpt-4o-mini", matcher_chunk_tokens=CHUNK_TOKENS,
                                   matcher_concurrency=IN_FLIGHT)
        session = await Session.open(store, providers, settings)
        root = session.tree.root.id
        totals: list[int] = []
        session.listeners.append(
            lambda n: totals.append(n.total) if isinstance(n, MatchingNotice) else None)
        try:
            batch = WriteBatch()
            for n in range(MESSAGES):
                kind = "user" if n % 2 == 0 else "assistant"
                batch.add(root, kind, {"content": f"{n}: {WORDS[n % 40:]}{WORDS[:n % 40]}"})
            await session.commit(batch)
            await session.measure(root)  # as the gauge does: the messages' counts are known
            times, chunks = [], 0
            for rep in range(reps + 1):
                start = time.perf_counter()
                outcome = await session.propose(root, "/forget the database schema talk")
                took = time.perf_counter() - start
                assert not isinstance(outcome, Pending)  # nothing matched: no review
                chunks = totals[-1]
                if rep:
                    times.append(took)
        finally:
            await session.close()
            await store.close()
    ideal = math.ceil(chunks / IN_FLIGHT) * DELAY
    return {"median": statistics.median(times), "ideal": ideal, "chunks": chunks,
            "times": times}


def figures(quick: bool = False) -> Iterator[str]:
    r = asyncio.run(_measure(1 if quick else 3))
    ratio = r["median"] / r["ideal"]
    verdict = "ok" if ratio <= GOAL else "miss"
    yield (f"forget_10k_vs_ideal: {ratio:.2f}x (<= {GOAL}x) {verdict}   "
           f"[{r['median'] * 1e3:.0f} ms for {r['chunks']} chunks, {IN_FLIGHT} in flight, "
           f"ideal {r['ideal'] * 1e3:.0f} ms; runs {', '.join(f'{t * 1e3:.0f}' for t in r['times'])} ms]")


if __name__ == "__main__":
    for text in figures(quick="--quick" in sys.argv):
        print(text)
