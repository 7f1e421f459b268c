"""The timing harness of the side-request figures (forget.py, compact.py): a loopback fake
provider in a child process (its parsing of big bodies is not this program's CPU) that
answers every request after a fixed delay, a session on a fresh database filled with
alternating user/assistant messages, and a command timed from its start to its proposal."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from figure import fmt  # noqa: E402
from ikigai_tui.core.events import WriteBatch  # noqa: E402
from ikigai_tui.core.session import Session, SessionSettings  # noqa: E402
from ikigai_tui.store.sqlite.store import Store  # noqa: E402
from ikigai_tui.core.matching import embedder as embedders  # noqa: E402
from ikigai_tui.embed import default_embedder  # noqa: E402

embedders.use(default_embedder)  # sessions opened here match as the program's do

ROOT = Path(__file__).resolve().parents[1]
T = TypeVar("T")


def _fake_source(delay: float, reply: str) -> str:
    """The child's script; `reply` is the source of the Reply it answers with."""
    return f"""
import sys, time
sys.path.insert(0, {str(ROOT)!r})
from tests.fakes.server import FakeProvider, Reply

def answer(received):
    time.sleep({delay})
    return {reply}

with FakeProvider() as fake:
    fake.respond(answer)
    print(fake.port, flush=True)
    sys.stdin.read()
"""


async def with_fake(delay: float, reply: str, measure: Callable[[str], Awaitable[T]]) -> T:
    """`measure(api_base)` against a fake that answers each request `delay` s after it
    arrives with `reply` (the source of a tests.fakes.server.Reply)."""
    os.environ.setdefault("OPENAI_API_KEY", "bench-key")
    child = subprocess.Popen([sys.executable, "-c", _fake_source(delay, reply)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        port = int(child.stdout.readline())
        return await measure(f"http://127.0.0.1:{port}/v1")
    finally:
        child.stdin.close()
        child.wait(timeout=10)


@asynccontextmanager
async def fresh_session(providers: Any, settings: SessionSettings) -> AsyncIterator[Session]:
    with tempfile.TemporaryDirectory() as tmp:
        store = await Store.open(Path(tmp) / "bench.db")
        session = await Session.open(store, providers, settings)
        try:
            yield session
        finally:
            await session.close()
            await store.close()


async def fill(session: Session, messages: int, content: Callable[[int], str]) -> str:
    """`messages` alternating user/assistant messages in the root's context; its id."""
    root = session.tree.root.id
    batch = WriteBatch()
    for n in range(messages):
        batch.add(root, "user" if n % 2 == 0 else "assistant", {"content": content(n)})
    await session.commit(batch)
    return root


def rotated(words: str) -> Callable[[int], str]:
    """Message n: its number, then `words` rotated by n % 40 characters."""
    return lambda n: f"{n}: {words[n % 40:]}{words[:n % 40]}"


async def time_proposals(session: Session, agent_id: str, command: str, reps: int,
                         check: Callable[[Any], None]) -> list[float]:
    """The command's time to its proposal, `reps` times after one untimed run (litellm's
    import and the first connection are start-up costs); `check` sees every outcome."""
    await session.measure(agent_id)  # as the gauge does: the messages' counts are known
    times = []
    for rep in range(reps + 1):
        start = time.perf_counter()
        outcome = await session.propose(agent_id, command)
        took = time.perf_counter() - start
        check(outcome)
        if rep:
            times.append(took)
    return times


def ratio_line(name: str, r: dict, goal: float, what: str) -> str:
    """`name: 1.12x (<= 1.3x) ok   [... ms for WHAT, ideal ... ms; runs ... ms]`: the
    median time over the ideal one."""
    ratio = r["median"] / r["ideal"]
    runs = ", ".join(f"{t * 1e3:.0f}" for t in r["times"])
    return fmt(name, f"{ratio:.2f}x", f"<= {goal}x", ratio <= goal,
               f"{r['median'] * 1e3:.0f} ms for {what}, ideal {r['ideal'] * 1e3:.0f} ms; "
               f"runs {runs} ms")
