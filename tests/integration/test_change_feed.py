"""Another process writes to the database a session has open: the session sees it live."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time

from ikigai_tui.core.notices import StreamDelta
from ikigai_tui.core.session import Session, SessionSettings
from ikigai_tui.store.sqlite.store import Store
from ikigai_tui.llm.providers import Providers
from tests.integration.processes import APPENDER, lease_rows, open_live, texts_in, wait_until


def test_another_process_appending_to_an_open_agent_reaches_the_open_session(tmp_path):
    """The defect of issue 11: a running session saw only its own writes. Another
    process appends to the agent this one has open: the context shows it, in log order,
    once each, without a restart; this session's own writes keep working after it."""
    db = tmp_path / "live.db"

    async def scenario() -> None:
        store, session = await open_live(db)
        try:
            root = session.tree.root
            task = await session.say(root.id, "mine before")
            await task
            replayer = await session.replayer(root.id)
            seen_changes: list = []
            session.listeners.append(seen_changes.append)
            proc = await asyncio.create_subprocess_exec(
                sys.executable, str(APPENDER), "batches", str(db), "X", "--agent", root.id,
                "--writers", "1", "--count", "3",
                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            out, err = await proc.communicate()
            assert proc.returncode == 0, err.decode()[-2000:]
            expected = [t for j in range(3) for t in (f"X writer 0 question {j}",
                                                      f"X writer 0 answer {j}")]
            async def arrived() -> bool:
                return expected[-1] in await texts_in(session, replayer)

            assert await wait_until(arrived), await texts_in(session, replayer)
            contents = await texts_in(session, replayer)
            assert [c for c in contents if c.startswith("X ")] == expected
            ids = [row[0] for row in replayer.history]
            assert ids == sorted(set(ids)), "applied out of order or twice"
            assert any(type(n).__name__ == "EventsCommitted" for n in seen_changes)
            # The context the next request is built from has them too.
            window = await session.measure(root.id)
            assert window.tokens > 0
            task = await session.say(root.id, "mine after")
            await task
            assert (await texts_in(session, replayer))[-2] == "mine after"
        finally:
            await session.close()
            await store.close()

    asyncio.run(scenario())


def test_an_agent_made_by_another_process_appears_and_takes_mail(tmp_path):
    """/fork in another `ikigai run`: the open session's tree shows the child; /send to
    it works; another process's /kill shows as dead, its mail count follows."""
    db = tmp_path / "live.db"

    async def run(text: str) -> None:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "ikigai_tui", "--db", str(db), "run",
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = await proc.communicate(text.encode())
        assert proc.returncode == 0, err.decode()[-2000:]

    async def scenario() -> None:
        store, session = await open_live(db)
        try:
            root = session.tree.root
            names = lambda: {a.name for a in session.tree}  # noqa: E731
            await run("/fork --name elsewhere\n")
            assert await wait_until(lambda: "elsewhere" in names()), names()
            child = session.tree.resolve("elsewhere")
            assert child.parent_id == root.id and child.status == "idle"
            result = await session.command(root.id, "/send elsewhere hello from afar")
            assert result.lines == [f"Mail sent to {session.tree.label(child.id)}."]
            assert child.unread == 1
            await run("/kill elsewhere\n")
            assert await wait_until(lambda: child.dead), child.status
        finally:
            await session.close()
            await store.close()

    asyncio.run(scenario())


def test_a_kill_from_another_process_ends_the_turn_running_here(tmp_path):
    """`/kill` in another `ikigai run` while this process streams the agent's reply: once
    the kill reaches this session through the feed, the turn ends here as after a local
    /kill; the partial reply is kept (after the kill in the log), flagged interrupted."""
    db = tmp_path / "live.db"

    async def scenario() -> None:
        store = await Store.open(db)
        # One word a second: the whole reply would take over a minute.
        session = await Session.open(store, Providers(offline_delay=1.0), SessionSettings())
        try:
            root = session.tree.root.id
            await session.command(root, "/fork --name kid")
            kid = session.tree.resolve("kid")
            streamed: list[str] = []
            session.listeners.append(
                lambda n: streamed.append(n.text) if isinstance(n, StreamDelta) else None)
            task = await session.say(kid.id, " ".join(["Tell me a very long story."] * 12))
            assert await wait_until(lambda: len(streamed) >= 2), streamed

            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "ikigai_tui", "--db", str(db), "run",
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            out, err = await proc.communicate(b"/kill kid\n")
            assert proc.returncode == 0, err.decode()[-2000:]
            assert f"Killed {session.tree.label(kid.id)}." in out.decode()
            killed_at = time.monotonic()

            done, _ = await asyncio.wait([task], timeout=5)
            assert done, "the turn went on after another process's /kill"
            assert task.cancelled()
            assert time.monotonic() - killed_at < 3
            assert kid.dead and kid.task is task and not kid.in_turn
            events = await store.events(kid.id)
            kinds = [e.kind for e in events]
            assert kinds.count("kill") == 1 and kinds.count("assistant") == 1
            assert kinds.index("kill") < kinds.index("assistant")
            reply = events[kinds.index("assistant")].payload
            assert reply["interrupted"] is True and reply["reason"] == "cancelled"
            assert reply["content"] == "".join(streamed)  # all that had arrived, no more
            assert reply["content"].startswith("Offline model")
            replayer = await session.replayer(kid.id)
            assert events[-1].id in replayer.ctx  # the partial reply is in the context
            assert await wait_until(lambda: lease_rows(db) == [])  # the lease is given back
        finally:
            await session.close()
            await store.close()

    asyncio.run(scenario())
