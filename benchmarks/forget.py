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
import statistics
import sys
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from figure import main  # noqa: E402
from side_timing import (  # noqa: E402
    fill, fresh_session, ratio_line, rotated, time_proposals, with_fake,
)

from ikigai_tui.core.commands.bus import Pending  # noqa: E402
from ikigai_tui.core.notices import MatchingNotice  # noqa: E402
from ikigai_tui.core.session import SessionSettings  # noqa: E402
from ikigai_tui.llm.providers import Providers  # noqa: E402

GOAL = 1.3
MESSAGES = 10_000
DELAY = 0.2
CHUNK_TOKENS = 25_000
IN_FLIGHT = 4
WORDS = ("the schema of orders and customers, an index on created_at, the weather in Lisbon, "
         "a jazz album for the evening, and how the deployment pipeline should be split up ")


REPLY = 'Reply(tool_calls=[("report_matches", {"matches": []})], usage=(1000, 5))'


async def _measure_on(api_base: str, reps: int) -> dict:
    providers = Providers(api_base=api_base, timeout=60, max_retries=0, concurrency=IN_FLIGHT)
    settings = SessionSettings(model="openai/gpt-4o-mini", matcher_chunk_tokens=CHUNK_TOKENS,
                               matcher_concurrency=IN_FLIGHT)
    async with fresh_session(providers, settings) as session:
        totals: list[int] = []
        session.listeners.append(
            lambda n: totals.append(n.total) if isinstance(n, MatchingNotice) else None)
        root = await fill(session, MESSAGES, rotated(WORDS))

        def nothing_matched(outcome) -> None:
            assert not isinstance(outcome, Pending)  # nothing matched: no review

        times = await time_proposals(session, root, "/forget the database schema talk", reps,
                                     nothing_matched)
    chunks = totals[-1]
    ideal = math.ceil(chunks / IN_FLIGHT) * DELAY
    return {"median": statistics.median(times), "ideal": ideal, "chunks": chunks,
            "times": times}


def figures(quick: bool = False) -> Iterator[str]:
    r = asyncio.run(with_fake(DELAY, REPLY, lambda api: _measure_on(api, 1 if quick else 3)))
    yield ratio_line("forget_10k_vs_ideal", r, GOAL, f"{r['chunks']} chunks, {IN_FLIGHT} in flight")


if __name__ == "__main__":
    main(figures)
