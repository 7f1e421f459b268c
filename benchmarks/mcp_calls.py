"""MCP tool calls (issue 25, Benchmark). benchmarks/run.py prints these lines after its
own figures.

  mcp_call_overhead  What a call of an MCP server's tool costs a turn beyond a built-in
        tool that does nothing: `Session.run_tool` (the tool's lookup, the permission
        rules, the call over stdio to the fake MCP server of tests/fakes/mcp_server.py,
        written with the `mcp` SDK, its result rendered and masked) for `fake__echo`,
        minus the same for `noop` (registered for this benchmark, it returns at once),
        interleaved ABAB after 20 untimed warm-up pairs, a gc.collect() before each.
        Median of 201 pairs (61 with --quick), in ms. Goal: <= 20 ms. The server's own
        work (echo a short text) is part of the figure: it is what the slowest path of
        the round trip looks like with a server that does nothing.
  mcp_start_max_stall  The longest the event loop was held while the first server
        started (the SDK imported in a worker thread, the process spawned, initialised,
        its tools listed): a 2 ms ticker's worst lateness, in ms. Goal: <= 50 ms, the
        screen's promise of no stall over 50 ms. The import holds the interpreter's lock
        in places (building the SDK's pydantic models), which the screen's thread feels.
"""

from __future__ import annotations

import asyncio
import gc
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from figure import fmt, main  # noqa: E402
from ikigai_tui.core.session import Session, SessionSettings  # noqa: E402
from ikigai_tui.core.tools import registry  # noqa: E402
from ikigai_tui.core.tools.permissions import PermissionService, Rules  # noqa: E402
from ikigai_tui.core.tools.servers import ServerConfig  # noqa: E402
from ikigai_tui.llm.providers import Providers  # noqa: E402
from ikigai_tui.mcp_servers import McpServers  # noqa: E402
from ikigai_tui.store.sqlite.store import Store  # noqa: E402

from tools import NoOp  # noqa: E402

SERVER = str(Path(__file__).resolve().parents[1] / "tests" / "fakes" / "mcp_server.py")
CALL_GOAL_MS, STALL_GOAL_MS = 20.0, 50.0
RUNS, QUICK_RUNS, WARM = 201, 61, 20


async def _measure(runs: int) -> tuple[list[float], list[float], float]:
    tools = registry()
    if tools.get(NoOp.name) is None:
        tools.add(NoOp())
    with tempfile.TemporaryDirectory() as tmp:
        store = await Store.open(Path(tmp) / "m.db")
        session = await Session.open(store, Providers(), SessionSettings(workspace=tmp))
        session.permissions = PermissionService(Rules({"*": "allow"}))
        session.use_tool_servers(McpServers([ServerConfig("fake", (sys.executable, SERVER))],
                                            base_dir=tmp))
        agent = session.tree.root.id
        await session.replayer(agent)
        lateness: list[float] = []
        ticking = True

        async def ticker() -> None:
            while ticking:
                started = time.perf_counter()
                await asyncio.sleep(0.002)
                lateness.append(time.perf_counter() - started - 0.002)

        tick = asyncio.ensure_future(ticker())
        try:
            await session.offer_tools(agent)
            ticking = False
            await tick
            assert session.tool_servers.states()[0].state == "running", "the server did not start"
            mcp: list[float] = []
            noop: list[float] = []
            for n in range(WARM + runs):
                for name, args, expected, into in (
                        ("fake__echo", '{"text": "pong"}', "pong", mcp),
                        ("noop", '{"path": "x"}', "ok", noop)):
                    gc.collect()
                    started = time.perf_counter()
                    text, is_error = await session.run_tool(agent, name, args, None)
                    elapsed = time.perf_counter() - started
                    assert (text, is_error) == (expected, False), (name, text)
                    if n >= WARM:
                        into.append(elapsed)
        finally:
            ticking = False
            await session.close()
            await store.close()
    return mcp, noop, max(lateness, default=0.0)


def figures(quick: bool = False) -> Iterator[str]:
    runs = QUICK_RUNS if quick else RUNS
    mcp, noop, stall = asyncio.run(_measure(runs))
    a, b = statistics.median(mcp), statistics.median(noop)
    overhead = (a - b) * 1e3
    yield fmt("mcp_call_overhead", f"{overhead:.2f} ms", f"<= {CALL_GOAL_MS:g} ms",
              overhead <= CALL_GOAL_MS,
              f"fake__echo over stdio {a * 1e3:.2f} ms, noop {b * 1e3:.3f} ms, medians of "
              f"{runs} interleaved calls through Session.run_tool")
    yield fmt("mcp_start_max_stall", f"{stall * 1e3:.1f} ms", f"<= {STALL_GOAL_MS:g} ms",
              stall * 1e3 <= STALL_GOAL_MS,
              "the event loop's worst lateness while the first server started (the SDK "
              "imported in a worker thread)")


if __name__ == "__main__":
    os.environ.pop("OPENAI_API_KEY", None)
    main(figures)
