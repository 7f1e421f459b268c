"""A child program for the crash and multi-process tests: appends to an ikigai database.

Every event is reported on standard output as soon as its transaction has committed
(from the store's commit hook, which runs after COMMIT), one line per event:

    C <id> <agent_id> <kind> <sha256 of the payload as canonical JSON>

so the parent can check, after killing this process at any moment, that everything it
was told is committed is in the log, unchanged.

DB is what a --db names: a SQLite file's path or a postgresql:// URL (store.open_store).

Modes:
  session DB TAG [--turns N]
      Opens a Session on the offline model and loops over the root agent: a user message
      and its reply (some messages make the model call the `slash` tool), now and then an
      unnamed /mark or a /fork with a prompt (the child answers concurrently). Meanwhile a
      second coroutine writes user+assistant batches straight to the store for an agent
      named `bulk` (forked from the root on first use). N = 0 (default) loops forever.
  batches DB TAG --agent ID [--writers K] [--count M] [--go FILE] [--pause S]
      K coroutines each commit M batches (user + assistant) for agent ID with store.write,
      concurrently (so they are group-committed), sleeping S seconds after each. With
      --go, writing starts only once FILE exists (after READY), so that several
      processes can be started together.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import sys
from pathlib import Path

# The checkout this script belongs to, not whichever ikigai_tui is installed (a git
# worktree's tests must run its own code in their child processes too).
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from ikigai_tui.core.events import WriteBatch  # noqa: E402
from ikigai_tui.core.session import Session, SessionSettings  # noqa: E402
from ikigai_tui.core.ports import Persistence  # noqa: E402
from ikigai_tui.store import open_store  # noqa: E402
from ikigai_tui.llm.providers import Providers  # noqa: E402


def payload_digest(payload: dict) -> str:
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def report(events, agents, updates) -> None:
    if not events:
        return
    lines = "".join(
        f"C {e.id} {e.agent_id} {e.kind} {payload_digest(e.payload)}\n" for e in events
    )
    sys.stdout.write(lines)
    sys.stdout.flush()


async def bulk_writer(store: Persistence, agent_id: str, tag: str, stop: asyncio.Event) -> None:
    j = 0
    while not stop.is_set():
        batch = WriteBatch()
        batch.add(agent_id, "user", {"content": f"{tag} bulk question {j}"})
        batch.add(agent_id, "assistant", {"content": f"{tag} bulk answer {j}"})
        await store.write(batch)
        j += 1
        await asyncio.sleep(0.002)


async def session_mode(db: str, tag: str, turns: int) -> None:
    store = await open_store(db)
    store.add_commit_hook(report)
    session = await Session.open(store, Providers(), SessionSettings())
    root = session.tree.root
    assert root is not None
    bulk = next((a for a in session.tree if a.name == "bulk"), None)
    if bulk is None:
        result = await session.command(root.id, "/fork --name bulk")
        bulk = session.tree[result.data]
    print("READY", flush=True)
    stop = asyncio.Event()
    bulk_task = asyncio.get_running_loop().create_task(bulk_writer(store, bulk.id, tag, stop))
    i = 0
    while turns == 0 or i < turns:
        text = f"{tag} message {i}"
        if i % 3 == 2:
            text += "\n@slash marks"
        task = await session.say(root.id, text)
        await task
        if i % 5 == 4:
            await session.command(root.id, "/mark")
        if i % 10 == 9:
            await session.command(root.id, f"/fork {tag} forked question {i}")
        i += 1
    stop.set()
    await bulk_task
    await session.wait_idle()
    await session.close()
    await store.close()
    print("DONE", flush=True)


async def batches_mode(db: str, tag: str, agent_id: str, writers: int, count: int,
                       go: str | None, pause: float) -> None:
    store = await open_store(db)
    store.add_commit_hook(report)
    print("READY", flush=True)
    waited = 0.0
    while go is not None and not os.path.exists(go):
        if waited > 60:
            raise SystemExit("gave up waiting for the go file")
        await asyncio.sleep(0.005)
        waited += 0.005

    async def writer(w: int) -> None:
        for j in range(count):
            batch = WriteBatch()
            batch.add(agent_id, "user", {"content": f"{tag} writer {w} question {j}"})
            batch.add(agent_id, "assistant", {"content": f"{tag} writer {w} answer {j}"})
            await store.write(batch)
            await asyncio.sleep(pause)

    await asyncio.gather(*(writer(w) for w in range(writers)))
    await store.close()
    print("DONE", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["session", "batches"])
    parser.add_argument("db")
    parser.add_argument("tag")
    parser.add_argument("--turns", type=int, default=0)
    parser.add_argument("--agent")
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--count", type=int, default=25)
    parser.add_argument("--go")
    parser.add_argument("--pause", type=float, default=0.0)
    args = parser.parse_args()
    if args.mode == "session":
        asyncio.run(session_mode(args.db, args.tag, args.turns))
    else:
        asyncio.run(batches_mode(args.db, args.tag, args.agent, args.writers, args.count,
                                 args.go, args.pause))


if __name__ == "__main__":
    main()
