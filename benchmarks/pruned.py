"""Summaries of pruned turns (issue 15 item 3). benchmarks/run.py prints these lines after
its own figures.

  pruned_update_100k_ms  What follows each turn with `summarize_pruned` on, on an agent of
        100,000 messages (100K budget: ~96,000 of them pruned and summarised; the offline
        model, so the summary is extractive and no request is made): the check, and the
        update of the summary with the turn the window just dropped (its text read, the
        earlier summary extended, one `pruned_summary` event committed). The first
        summary of all the pruned messages is made untimed. Median of 50 turns.
        Goal: <= 5 ms.
  pruned_plan_100k_vs_off  The next request's plan (with its messages) on that agent, a
        summary standing (its validity checked, its text counted), over the same plan on
        the same context with summaries off. Median of 50 each. Goal: <= 1.5x.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from figure import fmt, main  # noqa: E402
from ikigai_tui.core.compaction import CompactionSettings  # noqa: E402
from ikigai_tui.core.events import WriteBatch  # noqa: E402
from ikigai_tui.core.session import Session, SessionSettings  # noqa: E402
from ikigai_tui.store.sqlite.store import Store  # noqa: E402
from ikigai_tui.llm.providers import Providers  # noqa: E402

MESSAGES = 100_000
TURNS = 50
UPDATE_GOAL_MS = 5.0
PLAN_GOAL = 1.5
WORDS = "we chose PostgreSQL for the orders service because of its row locks "


async def _measure(on: bool) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        store = await Store.open(Path(tmp) / "pruned.db")
        settings = SessionSettings(compaction=CompactionSettings(summarize_pruned=on))
        session = await Session.open(store, Providers(), settings)
        root = session.tree.root.id
        try:
            batch = WriteBatch()
            for n in range(MESSAGES):
                batch.add(root, "user" if n % 2 == 0 else "assistant", {"content": f"{n} {WORDS}"})
            await session.commit(batch)
            agent = session.tree[root]
            await session.measure(root)
            await session.after_turn(agent)  # the first summary: untimed
            updates, plans = [], []
            for n in range(TURNS):
                turn = WriteBatch()
                turn.add(root, "user", {"content": f"question {n} {WORDS}"})
                turn.add(root, "assistant", {"content": f"reply {n} {WORDS}"})
                await session.commit(turn)
                start = time.perf_counter()
                await session.after_turn(agent)
                updates.append(time.perf_counter() - start)
                start = time.perf_counter()
                plan = await session.plan(root, messages=True)
                plans.append(time.perf_counter() - start)
            events = [e for e in await store.events(root) if e.kind == "pruned_summary"]
        finally:
            await session.close()
            await store.close()
    return {"update": statistics.median(updates), "update_max": max(updates),
            "plan": statistics.median(plans), "window": plan.window, "events": len(events)}


def figures(quick: bool = False) -> Iterator[str]:
    off = asyncio.run(_measure(False))
    on = asyncio.run(_measure(True))
    w = on["window"]
    ms = on["update"] * 1e3
    yield fmt("pruned_update_100k_ms", f"{ms:.2f} ms", f"<= {UPDATE_GOAL_MS:g} ms",
              ms <= UPDATE_GOAL_MS,
              f"median of {TURNS}, max {on['update_max'] * 1e3:.1f} ms; {on['events']} updates; "
              f"the summary covers {w.pruned_covered:,} messages in {w.pruned_summary:,} tokens "
              f"of a {w.reserve:,}-token reserve")
    ratio = on["plan"] / off["plan"]
    yield fmt("pruned_plan_100k_vs_off", f"{ratio:.2f}x", f"<= {PLAN_GOAL}x", ratio <= PLAN_GOAL,
              f"on {on['plan'] * 1e3:.2f} ms, off {off['plan'] * 1e3:.2f} ms, medians of {TURNS}")


if __name__ == "__main__":
    main(figures)
