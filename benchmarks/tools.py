"""The tool round trip (issue 25, Benchmark). benchmarks/run.py prints this line after its
own figures.

  tool_round_trip_vs_noop  A whole turn through real litellm (openai/gpt-4o) against the
        loopback fake provider of tests/fakes: the model asks for `read_file` of a small
        file (41 lines, ~2.5 KB) in the agent's workspace, the tool runs (the permission
        rules allow it: PermissionService(Rules({"*": "allow"}))), its result is stored,
        and the model answers; over the same turn where the model asks for `noop`, a tool
        registered for this benchmark that does nothing. What the figure weighs is what
        read_file adds to a turn (the workspace's checks, the read, the larger result
        stored and sent) beside the turn's fixed costs (two requests, the commits).
        Both turns are wall time from `Session.say` to the turn's end, on one agent,
        interleaved in ABBA order (the context grows the same for both), after three
        untimed warm-up pairs, a gc.collect() before each turn; each turn checks that
        the provider received the tool's result. Ratio of medians of 21 turns each (11
        with --quick). Goal: <= 1.2x. The turn is ~100 ms and read_file's own run ~0.5 ms
        (noop's ~0.2 ms): on a busy machine the figure moves by +-0.15 around 1.0 between
        runs; a miss above that is worth a second run before a look.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from figure import fmt, main  # noqa: E402
from ikigai_tui.core.session import Session, SessionSettings  # noqa: E402
from ikigai_tui.core.tools import ToolContext, ToolResult, registry  # noqa: E402
from ikigai_tui.core.tools.permissions import PermissionService, Rules  # noqa: E402
from ikigai_tui.llm.providers import Providers  # noqa: E402
from ikigai_tui.store.sqlite.store import Store  # noqa: E402
from tests.fakes.server import FakeProvider, Reply  # noqa: E402

MODEL = "openai/gpt-4o"
GOAL = 1.2
RUNS, QUICK_RUNS, WARM = 21, 11, 3
SMALL = "".join(f"{n:3d}  def handler(request): return respond(request, status=200)\n"
                for n in range(40)) + "# the end of small.txt\n"


class NoOp:
    """A tool that does nothing: the turn's round trip without a tool's own work."""

    name = "noop"
    access = "read"
    callers = frozenset({"turn"})

    def describe(self, arguments: Any, context: ToolContext | None = None) -> str:
        return "noop"

    def schema(self) -> dict[str, Any]:
        return {"type": "function", "function": {
            "name": self.name, "description": "Does nothing.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}

    async def execute(self, context: ToolContext, arguments: Any) -> ToolResult:
        return ToolResult("ok")


async def _turn(session: Session, agent: str, fake: FakeProvider, tool: str,
                expected: str) -> float:
    fake.queue(Reply(tool_calls=[(tool, {"path": "small.txt"})]), Reply(text="Done."))
    gc.collect()
    started = time.perf_counter()
    task = await session.say(agent, f"Call {tool}.")
    assert await task, f"the {tool} turn failed"
    elapsed = time.perf_counter() - started
    assert json.dumps(expected)[1:-1] in json.dumps(fake.requests[-1].body), "result not sent"
    return elapsed


async def _measure(runs: int) -> tuple[list[float], list[float]]:
    os.environ["OPENAI_API_KEY"] = "bench-key"  # this process's own: the fake takes any key
    tools = registry()
    if tools.get(NoOp.name) is None:
        tools.add(NoOp())
    with tempfile.TemporaryDirectory() as tmp, FakeProvider() as fake:
        work = Path(tmp) / "work"
        work.mkdir()
        (work / "small.txt").write_text(SMALL)
        store = await Store.open(Path(tmp) / "t.db")
        session = await Session.open(
            store, Providers(api_base=fake.openai_base, timeout=10, max_retries=0),
            SessionSettings(model=MODEL, workspace=str(work)))
        session.permissions = PermissionService(Rules({"*": "allow"}))
        try:
            agent = session.tree.root.id
            read: list[float] = []
            noop: list[float] = []
            for n in range(WARM + runs):
                pair = [("read_file", "# the end of small.txt", read), ("noop", "ok", noop)]
                for tool, expected, into in pair if n % 2 == 0 else pair[::-1]:
                    elapsed = await _turn(session, agent, fake, tool, expected)
                    if n >= WARM:
                        into.append(elapsed)
                    fake.clear()
        finally:
            await session.close()
            await store.close()
    return read, noop


def figures(quick: bool = False) -> Iterator[str]:
    runs = QUICK_RUNS if quick else RUNS
    read, noop = asyncio.run(_measure(runs))
    a, b = statistics.median(read), statistics.median(noop)
    ratio = a / b
    yield fmt("tool_round_trip_vs_noop", f"{ratio:.2f}x", f"<= {GOAL:g}x", ratio <= GOAL,
              f"read_file turn {a * 1e3:.1f} ms, noop turn {b * 1e3:.1f} ms, medians of "
              f"{runs}; real litellm against the loopback fake provider")


if __name__ == "__main__":
    main(figures)
