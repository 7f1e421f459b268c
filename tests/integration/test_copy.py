"""`ikigai copy SRC DST` (issue 26 item 6): a whole log between SQLite and PostgreSQL, both
ways, with its ids kept; every agent replays the same on both sides (checked here with
sessions of the test's own, apart from the command's own check); a non-empty destination
is refused (nothing written) unless a SQLite file may be moved aside (--replace)."""

from __future__ import annotations

import asyncio
import hashlib
import io
from pathlib import Path

import pytest

from ikigai_tui.cli import copy as copy_cli
from ikigai_tui.cli import main
from ikigai_tui.core.events import Event, WriteBatch
from ikigai_tui.core.session import Session, SessionSettings
from ikigai_tui.llm.providers import Providers
from ikigai_tui.store import open_store
from tests.integration.session_helpers import fork, ids, talk

async def run(argv: list[str]) -> int:
    """`ikigai ARGV` in this process (its own event loop, in a thread), for its output
    through capsys and the module patched."""
    return await asyncio.to_thread(main, argv)


FACTORS = [("offline", 1.25, 7), ("gpt-4o", 0.93, 2)]


async def build_log(path: Path) -> None:
    """A log with a fork, marks (one set by the LLM between its tool call and the call's
    result), a /forget filter, a /compact, tool calls, an /undo and token factors."""
    store = await open_store(path)
    session = await Session.open(store, Providers(), SessionSettings())
    try:
        root = session.tree.root.id
        for text in ("first about apples", "second about pears"):
            await talk(session, root, text)
        await talk(session, root, "@slash mark M")  # a tool call and its result
        await session.command(root, "/mark A")
        for text in ("third about plums", "fourth about figs"):
            await talk(session, root, text)
        forgotten = (await ids(session, root))[1]
        assert (await session.command(root, f"/forget --ids {forgotten}")).lines
        kid = await fork(session, root, "--name kid")
        await talk(session, kid, "kid talk")
        await talk(session, kid, "kid talk again")
        compacted = await session.command(kid, "/compact")
        assert compacted.lines[-1].startswith("Compacted"), compacted.lines
        await session.command(root, f"/forget --ids {(await ids(session, root))[0]}")
        assert (await session.command(root, "/undo")).lines[0].startswith("Undid")
        await talk(session, root, "fifth about limes")
        batch = WriteBatch()
        batch.factors.extend(FACTORS)
        await session.commit(batch)
    finally:
        await session.close()
        await store.close()


async def contents(target) -> tuple:
    """Everything a copy must keep: the agents, every event, the token factors, and each
    agent's replayed context (messages with their text; marks, undone events, settings)."""
    store = await open_store(target, create=False, readonly=True)
    session = await Session.open(store, Providers(), SessionSettings(), create_root=False)
    try:
        agents = sorted(await store.agents())
        events = await store.events()
        replays = {}
        for agent in agents:
            replayer = await session.replayer(agent.id)
            replays[agent.id] = (await session.messages(agent.id),
                                 sorted(replayer.marks.values(), key=lambda m: m.event_id),
                                 sorted(replayer.undone), replayer.system, replayer.model,
                                 replayer.budget, replayer.cwd, replayer.dead)
        return agents, events, await store.token_factors(), replays
    finally:
        await session.close()
        await store.close()


@pytest.fixture
async def log(tmp_path) -> Path:
    path = tmp_path / "src.db"
    await build_log(path)
    return path


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def one_error(err: str, wanted: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and wanted in lines[0], lines


async def test_a_log_round_trips_to_postgresql_and_back_exactly(log, pg_url, tmp_path,
                                                                capsys, monkeypatch):
    monkeypatch.setattr(copy_cli, "PAGE", 7)  # many pages: ids kept across their edges
    original = await contents(log)
    agents, events, factors, replays = original
    kinds = {e.kind for e in events}
    assert {"tool_call", "tool_result", "mark", "filter", "compact", "undo"} <= kinds, kinds
    assert len(agents) == 2 and len(events) > 3 * copy_cli.PAGE and factors

    assert await run(["copy", str(log), pg_url]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out == [f"Copied 2 agents, {len(events)} events from {log} to {pg_url}; "
                   "every agent replays the same."]
    assert await contents(pg_url) == original

    back = tmp_path / "back.db"
    assert await run(["copy", pg_url, str(back)]) == 0
    assert capsys.readouterr().out.startswith("Copied 2 agents")
    assert await contents(back) == original

    # The copy is a log like any other: the next write follows its last id.
    store = await open_store(pg_url)
    try:
        assert (await store.append(agents[0].id, "user", {"content": "after"})).id == \
            events[-1].id + 1
    finally:
        await store.close()


def test_the_command_line_copies_then_refuses_a_destination_that_holds_a_log(log, pg_url,
                                                                            ikigai, tmp_path):
    done = ikigai("copy", str(log), pg_url)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Copied 2 agents, ") and done.stderr == ""
    assert done.stdout.rstrip().endswith("every agent replays the same.")

    again = ikigai("copy", str(log), pg_url)
    assert again.returncode == 2 and again.stdout == ""
    one_error(again.stderr, "already holds a log; copy into a new schema (?schema=NAME")
    replace = ikigai("copy", str(log), pg_url, "--replace")
    assert replace.returncode == 2
    one_error(replace.stderr, "a PostgreSQL log is never replaced")

    # A new schema of the same database takes it.
    other = ikigai("copy", str(log), pg_url + "?schema=second")
    assert other.returncode == 0 and "every agent replays the same" in other.stdout


async def test_a_sqlite_destination_that_holds_a_log_is_kept_or_moved_aside(log, tmp_path,
                                                                             capsys):
    dst = tmp_path / "dst.db"
    await build_log(dst)
    before = digest(dst)
    assert await run(["copy", str(log), str(dst)]) == 2
    one_error(capsys.readouterr().err, f"{dst} already holds a log")
    assert digest(dst) == before

    assert await run(["copy", str(log), str(dst), "--replace"]) == 0
    out = capsys.readouterr().out.splitlines()
    (aside,) = [p for p in tmp_path.iterdir() if p.name.startswith("dst.db.bak-")
                and not p.name.endswith(("-wal", "-shm"))]
    assert out[0] == f"Moved {dst} aside to {aside}" and out[1].startswith("Copied 2 agents")
    assert digest(aside) == before
    assert await contents(dst) == await contents(log)


def test_a_source_that_does_not_exist_is_one_line_and_nothing_is_made(ikigai, tmp_path):
    done = ikigai("copy", str(tmp_path / "nowhere.db"), str(tmp_path / "new.db"))
    assert done.returncode == 2 and done.stdout == ""
    one_error(done.stderr, f"no database at {tmp_path / 'nowhere.db'}")
    assert not (tmp_path / "new.db").exists()


def test_a_password_in_a_url_is_never_shown(log, ikigai):
    done = ikigai("copy", str(log), "postgresql://me:s3cret-pw@127.0.0.1:1/nowhere")
    assert done.returncode == 2 and "s3cret-pw" not in done.stdout + done.stderr
    one_error(done.stderr, "postgresql://me:***@127.0.0.1:1/nowhere")


async def test_a_copy_that_does_not_replay_the_same_is_reported(log, tmp_path, capsys,
                                                                monkeypatch):
    """The check can fail: a copy whose one event was changed on the way."""
    pages = copy_cli._pages

    async def altered(src, last, progress):
        async for page in pages(src, last, progress):
            yield [Event(e.id, e.agent_id, e.kind, {**e.payload, "content": "changed"}, e.created_at)
                   if e.kind == "user" and e.payload.get("content") == "third about plums" else e
                   for e in page]

    monkeypatch.setattr(copy_cli, "_pages", altered)
    assert await run(["copy", str(log), str(tmp_path / "bad.db")]) == 1
    out = capsys.readouterr().out.splitlines()
    assert any("reads back differently" in line for line in out), out
    assert any(line.startswith("  agent root") and "replays differently" in line
               for line in out), out
    assert out[-1].startswith("Copied 2 agents") and out[-1].endswith("; 2 differences (listed above).")


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_progress_bar_shows_events_and_rate_on_a_terminal_only():
    shown = Terminal()
    bar = copy_cli.Progress(10_000, shown)
    bar.advance(5_000)
    line = shown.getvalue()
    assert line.startswith("\r[###############...............] 5,000/10,000 events  50%")
    assert line.rstrip().endswith("events/s")
    bar.end()
    assert shown.getvalue().endswith("\r\x1b[K")

    hidden = io.StringIO()
    bar = copy_cli.Progress(10_000, hidden)
    bar.advance(10_000)
    bar.end()
    assert hidden.getvalue() == ""
