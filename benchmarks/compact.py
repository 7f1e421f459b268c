"""/compact and auto-compaction (issue 15). benchmarks/run.py prints these lines after
its own figures.

  compact_150k_vs_ideal  A session on a fresh database holds a context of ~150,000 tokens
        (2,600 messages of ~58 tokens). `/compact` summarises all but the latest 2 turns
        through real litellm against the loopback fake provider (run in a child process,
        as a provider is), which answers every request 500 ms after it arrives. The
        summarising model takes 32,000 tokens (`[models]` max_input_tokens), so the
        request is built in pieces summarised 4 at a time, then one request merges their
        summaries. Time: from the command to its proposal. The context is measured
        first, as the gauge has it measured in the program. Ideal:
        (ceil(pieces / 4) + merge rounds) x 500 ms. One untimed run first (litellm's
        import and the first connection are start-up costs). Median of 3.
        Goal: <= 1.3x the ideal.
  auto_check_100k_ms     The auto-compaction check that follows every turn (usage of the
        whole context against compact_warn and compact_at), on an agent of 100,000
        messages whose context is loaded, right after one more message was committed
        (auto_compact on, already compacted at this crossing: the steady state).
        Median of 200. Goal: <= 5 ms.
"""

from __future__ import annotations

import asyncio
import math
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from figure import fmt, main  # noqa: E402
from side_timing import (  # noqa: E402
    fill, fresh_session, ratio_line, rotated, time_proposals, with_fake,
)

from ikigai_tui.core.commands.bus import Pending  # noqa: E402
from ikigai_tui.core.notices import CompactingNotice
from ikigai_tui.core.compaction import CompactionSettings# noqa: E402
from ikigai_tui.core.compaction.auto import AutoState  # noqa: E402
from ikigai_tui.core.events import WriteBatch  # noqa: E402
from ikigai_tui.core.session import SessionSettings  # noqa: E402
from ikigai_tui.llm.providers import Providers  # noqa: E402

GOAL = 1.3
CHECK_GOAL_MS = 5.0
MESSAGES = 2_600
DELAY = 0.5
MODEL = "openai/gpt-4o-mini"
MODEL_LIMIT = 32_000
IN_FLIGHT = 4
CHECK_MESSAGES = 100_000
CHECKS = 200
WORDS = ("we chose PostgreSQL for the orders service because of its row locks, moved the "
         "cron jobs to src/jobs/nightly.py, and the flaky test in tests/test_orders.py was a "
         "timezone bug; next, the deployment pipeline and the index on created_at ")
SUMMARY = "## Goal\nShip the orders service.\n" + "## Decisions (each with its reason)\n" + \
    "\n".join(f"- decision {i}: because reason {i}" for i in range(60))
REPLY = f"Reply(text={SUMMARY!r}, usage=(30000, 800), chunk_size=2000)"


async def _measure_on(api_base: str, reps: int) -> dict:
    providers = Providers(api_base=api_base, timeout=60, max_retries=0, concurrency=IN_FLIGHT,
                          model_input_limits={MODEL: MODEL_LIMIT})
    settings = SessionSettings(model=MODEL, budget=0,
                               compaction=CompactionSettings(concurrency=IN_FLIGHT))
    async with fresh_session(providers, settings) as session:
        totals: list[int] = []
        session.listeners.append(
            lambda n: totals.append(n.total) if isinstance(n, CompactingNotice) else None)
        root = await fill(session, MESSAGES, rotated(WORDS))
        outcomes: list[Pending] = []

        def proposed(outcome) -> None:
            assert isinstance(outcome, Pending)
            outcomes.append(outcome)

        times = await time_proposals(session, root, "/compact", reps, proposed)
        window = await session.measure(root)
    pieces = outcomes[-1].proposal.pieces
    merges = totals[-1] - pieces
    ideal = (math.ceil(pieces / IN_FLIGHT) + (1 if merges else 0)) * DELAY
    return {"median": statistics.median(times), "ideal": ideal, "pieces": pieces,
            "merges": merges, "times": times, "tokens": window.tokens}


async def _check() -> dict:
    settings = SessionSettings(compaction=CompactionSettings(auto="on"))
    async with fresh_session(Providers(), settings) as session:
        root = await fill(session, CHECK_MESSAGES, lambda n: f"{n} {WORDS[:60]}")
        agent = session.tree[root]
        await session.measure(root)
        # Over compact_at and already compacted at this crossing: the check only.
        session.compactor.auto_state[root] = AutoState(warned=True, armed=False)
        times = []
        for n in range(CHECKS):
            one = WriteBatch()
            one.add(root, "assistant", {"content": f"reply {n}"})
            await session.commit(one)  # a turn ended with one more message
            start = time.perf_counter()
            await session.after_turn(agent)
            times.append(time.perf_counter() - start)
        w = await session.measure(root)
    return {"median": statistics.median(times), "max": max(times),
            "share": (w.tokens + w.outside) / (w.budget or w.limit)}


def figures(quick: bool = False) -> Iterator[str]:
    r = asyncio.run(with_fake(DELAY, REPLY, lambda api: _measure_on(api, 1 if quick else 3)))
    yield ratio_line("compact_150k_vs_ideal", r, GOAL,
                     f"{r['pieces']} pieces ({IN_FLIGHT} in flight) and {r['merges']} merge "
                     f"request(s) over ~{r['tokens']:,} tokens")
    c = asyncio.run(_check())
    ms = c["median"] * 1e3
    yield fmt("auto_check_100k_ms", f"{ms:.3f} ms", f"<= {CHECK_GOAL_MS:g} ms", ms <= CHECK_GOAL_MS,
              f"median of {CHECKS}, max {c['max'] * 1e3:.2f} ms; {CHECK_MESSAGES:,} messages, "
              f"usage {c['share']:.0%} of the budget")


if __name__ == "__main__":
    main(figures)
