"""Several processes append to one database at once: nothing is lost, nothing doubled."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path

from ikigai_tui.core.events import AgentRecord, WriteBatch
from ikigai_tui.core.store import Store

APPENDER = Path(__file__).parent / "scripts" / "appender.py"
MESSAGES = 30


def _env(**extra: str) -> dict:
    env = dict(os.environ)
    env.update(extra)
    return env


def _ikigai(db: Path, *args: str, **popen) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "ikigai_tui", "--db", str(db), *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen,
    )


def _finish(proc: subprocess.Popen, timeout: float = 90) -> tuple[str, str]:
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise AssertionError(f"timed out; stderr: {err[-2000:]}") from None
    return out, err


def _rows(db: Path) -> list[tuple[int, str, str, dict]]:
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        rows = conn.execute("SELECT id, agent_id, kind, payload FROM events ORDER BY id").fetchall()
    finally:
        conn.close()
    ids = [r[0] for r in rows]
    assert len(ids) == len(set(ids))
    return [(i, a, k, json.loads(p)) for i, a, k, p in rows]


def _agents(db: Path) -> dict[str, tuple[str, str | None]]:
    """name -> (id, parent_id)"""
    conn = sqlite3.connect(db)
    try:
        return {n: (i, p) for i, n, p in conn.execute("SELECT id, name, parent_id FROM agents")}
    finally:
        conn.close()


def _check_conversation(rows, agent_id: str, texts: list[str]) -> None:
    """Each text is a user message of the agent exactly once, in order, each followed
    (before the next user message) by the offline model's reply to it."""
    mine = [(i, k, p) for i, a, k, p in rows if a == agent_id]
    users = [(n, p["content"]) for n, (_, k, p) in enumerate(mine) if k == "user"]
    counts = Counter(text for _, text in users)
    for text in texts:
        assert counts[text] == 1, f"{text!r} is in the log {counts[text]} times"
    positions = [n for n, text in users if text in set(texts)]
    assert [text for _, text in users if text in set(texts)] == texts, "out of order"
    for n in positions:
        text = mine[n][2]["content"]
        following = []
        for _, kind, payload in mine[n + 1:]:
            if kind == "user":
                break
            following.append((kind, payload))
        replies = [p["content"] for k, p in following if k == "assistant"]
        assert len(replies) == 1, f"{text!r} has {len(replies)} replies"
        assert f'You said: "{text}"' in replies[0]
        assert not any(p.get("interrupted") for k, p in following if k == "assistant")


def test_two_cli_runs_on_root_and_a_forked_child_at_once_lose_nothing(tmp_path):
    db = tmp_path / "shared.db"
    setup = _ikigai(db, "run", stdin=subprocess.PIPE)
    out, err = setup.communicate("first words before the fork\n/fork --name side\n", timeout=60)
    assert setup.returncode == 0, err
    agents = _agents(db)
    root_id, side_id = agents["root"][0], agents["side"][0]
    assert agents["side"][1] == root_id

    alpha = [f"alpha message {i} {uuid.uuid4().hex[:8]}" for i in range(MESSAGES)]
    beta = [f"beta message {i} {uuid.uuid4().hex[:8]}" for i in range(MESSAGES)]
    (tmp_path / "alpha.txt").write_text("\n".join(alpha) + "\n")
    (tmp_path / "beta.txt").write_text("\n".join(beta) + "\n")
    # A small delay per streamed word keeps both processes writing at the same time.
    env = _env(IKIGAI_OFFLINE_DELAY="0.001")
    procs = [
        _ikigai(db, "run", "--script", str(tmp_path / "alpha.txt"), env=env),
        _ikigai(db, "run", "--agent", "side", "--script", str(tmp_path / "beta.txt"), env=env),
    ]
    results = [_finish(p) for p in procs]
    for proc, (out, err) in zip(procs, results):
        assert proc.returncode == 0, err[-3000:]
        assert "Traceback" not in err and "Error" not in err, err[-3000:]
        assert out.count("Offline model here.") == MESSAGES

    rows = _rows(db)
    _check_conversation(rows, root_id, alpha)
    _check_conversation(rows, side_id, beta)
    # Each agent's messages are its own: none of alpha went to side or the other way.
    root_users = {p["content"] for _, a, k, p in rows if a == root_id and k == "user"}
    side_users = {p["content"] for _, a, k, p in rows if a == side_id and k == "user"}
    assert not root_users & set(beta) and not side_users & set(alpha)
    assert _agents(db).keys() == {"root", "side"}

    # The two writers really overlapped in time (otherwise this test proves little).
    alpha_ids = [i for i, a, k, p in rows if a == root_id and p.get("content") in set(alpha)]
    beta_ids = [i for i, a, k, p in rows if a == side_id and p.get("content") in set(beta)]
    assert min(alpha_ids) < max(beta_ids) and min(beta_ids) < max(alpha_ids)

    # Both contexts read back through the CLI, each with all of its conversation.
    for agent, texts in (("root", alpha), ("side", beta)):
        proc = _ikigai(db, "context", "--agent", agent, "--json")
        out, err = _finish(proc)
        assert proc.returncode == 0, err
        contents = [m["content"] for m in json.loads(out)["messages"] if m["role"] == "user"]
        assert contents[0] == "first words before the fork"
        assert [c for c in contents if c in set(texts)] == texts


def test_two_appender_processes_group_committing_to_one_agent_lose_nothing(tmp_path):
    db = tmp_path / "shared.db"

    async def setup() -> str:
        store = await Store.open(db)
        batch = WriteBatch()
        batch.new_agents.append(AgentRecord("shared", None, "shared", "offline", "idle",
                                            time.time(), None, None))
        await store.write(batch)
        await store.close()
        return "shared"

    agent = asyncio.run(setup())
    writers, count = 4, 40
    go = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, str(APPENDER), "batches", str(db), tag, "--agent", agent,
             "--writers", str(writers), "--count", str(count), "--go", str(go),
             "--pause", "0.002"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for tag in ("P", "Q")
    ]
    try:
        for proc in procs:  # both have the database open before either writes
            assert proc.stdout is not None
            assert proc.stdout.readline() == "READY\n", _finish(proc)[1][-3000:]
        go.touch()
        reported: dict[str, dict[int, tuple[str, str]]] = {}
        for tag, proc in zip(("P", "Q"), procs):
            out, err = _finish(proc)
            assert proc.returncode == 0, err[-3000:]
            lines = out.splitlines()
            assert lines[-1] == "DONE"
            reported[tag] = {}
            for line in lines[:-1]:
                _, event_id, agent_id, kind, _digest = line.split(" ")
                assert agent_id == agent
                reported[tag][int(event_id)] = (agent_id, kind)
            assert len(reported[tag]) == 2 * writers * count
    finally:
        for proc in procs:  # never leave a writer waiting for the go file
            if proc.poll() is None:
                proc.kill()
                proc.wait()

    assert not set(reported["P"]) & set(reported["Q"]), "the processes got the same ids"
    rows = _rows(db)
    assert len(rows) == 4 * writers * count
    by_id = {i: (a, k, p) for i, a, k, p in rows}
    for tag in ("P", "Q"):
        for event_id, (agent_id, kind) in reported[tag].items():
            assert by_id[event_id][:2] == (agent_id, kind)
    # Every question exactly once, immediately followed by its own answer.
    contents = [p["content"] for _, _, _, p in rows]
    assert len(contents) == len(set(contents))
    for n, (_, _, kind, payload) in enumerate(rows):
        if kind == "user":
            answer = payload["content"].replace("question", "answer")
            assert rows[n + 1][2] == "assistant" and rows[n + 1][3]["content"] == answer
    for tag in ("P", "Q"):
        for w in range(writers):
            for j in range(count):
                assert f"{tag} writer {w} question {j}" in contents
    # The two processes interleaved.
    p_ids, q_ids = sorted(reported["P"]), sorted(reported["Q"])
    assert p_ids[0] < q_ids[-1] and q_ids[0] < p_ids[-1]


def test_cli_runs_started_together_on_a_brand_new_database_all_succeed(tmp_path):
    """`ikigai run` started several times at once on a database that does not exist yet
    (a race, so tried several times): the file is created and migrated once, one root
    agent is created, every input is answered."""
    starters = 4
    for attempt in range(10):
        db = tmp_path / f"new{attempt}.db"
        procs = [_ikigai(db, "run", stdin=subprocess.PIPE) for _ in range(starters)]
        outs = [_finish_with_input(p, f"hello from process {k} try {attempt}\n")
                for k, p in enumerate(procs)]
        for proc, (out, err) in zip(procs, outs):
            assert proc.returncode == 0, f"attempt {attempt}: {err[-3000:]}"
            assert "Offline model here." in out
        agents = _agents(db)
        assert list(agents) == ["root"], f"attempt {attempt}: agents {agents}"
        rows = _rows(db)
        users = sorted(p["content"] for _, _, k, p in rows if k == "user")
        assert users == [f"hello from process {k} try {attempt}" for k in range(starters)]


def _finish_with_input(proc: subprocess.Popen, text: str) -> tuple[str, str]:
    try:
        return proc.communicate(text, timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise AssertionError(f"timed out; stderr: {err[-2000:]}") from None


async def _until(predicate, timeout: float = 10.0) -> bool:
    """Waits (the event loop keeps running: the session's poller with it) until true."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.01)
    return True


async def _open_live(db: Path):
    from ikigai_tui.core.session import Session, SessionSettings
    from ikigai_tui.llm.providers import Providers

    store = await Store.open(db)
    return store, await Session.open(store, Providers(), SessionSettings())


def _contents(replayer) -> list[str]:
    return [row[2].get("content") for row in replayer.history if row[1] in ("user", "assistant")]


def test_another_process_appending_to_an_open_agent_reaches_the_open_session(tmp_path):
    """The defect of issue 11: a running session saw only its own writes. Another
    process appends to the agent this one has open: the context shows it, in log order,
    once each, without a restart; this session's own writes keep working after it."""
    db = tmp_path / "live.db"

    async def scenario() -> None:
        store, session = await _open_live(db)
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
            assert await _until(lambda: expected[-1] in _contents(replayer)), _contents(replayer)
            contents = _contents(replayer)
            assert [c for c in contents if c.startswith("X ")] == expected
            ids = [row[0] for row in replayer.history]
            assert ids == sorted(set(ids)), "applied out of order or twice"
            assert any(type(n).__name__ == "EventsCommitted" for n in seen_changes)
            # The context the next request is built from has them too.
            window = await session.measure(root.id)
            assert window.tokens > 0
            task = await session.say(root.id, "mine after")
            await task
            assert _contents(replayer)[-2] == "mine after"
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
        store, session = await _open_live(db)
        try:
            root = session.tree.root
            names = lambda: {a.name for a in session.tree}  # noqa: E731
            await run("/fork --name elsewhere\n")
            assert await _until(lambda: "elsewhere" in names()), names()
            child = session.tree.resolve("elsewhere")
            assert child.parent_id == root.id and child.status == "idle"
            result = await session.command(root.id, "/send elsewhere hello from afar")
            assert result.lines == [f"Mail sent to {session.tree.label(child.id)}."]
            assert child.unread == 1
            await run("/kill elsewhere\n")
            assert await _until(lambda: child.dead), child.status
        finally:
            await session.close()
            await store.close()

    asyncio.run(scenario())


def _leases(db: Path) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT agent_id, pid, host FROM leases").fetchall()
    finally:
        conn.close()


def test_a_second_process_running_a_turn_of_a_busy_agent_is_refused_at_once(tmp_path):
    """Two processes, one agent: while the first runs a (slow) turn, the second is
    refused before anything is written, with one line naming the holder; exit 1."""
    import socket

    db = tmp_path / "busy.db"
    setup = _ikigai(db, "run", stdin=subprocess.PIPE)
    _, err = setup.communicate("/fork --name worker\n", timeout=60)
    assert setup.returncode == 0, err
    script = tmp_path / "slow.txt"
    script.write_text("a long question " + "word " * 30 + "\n")
    slow = _ikigai(db, "run", "--agent", "worker", "--script", str(script),
                   env=_env(IKIGAI_OFFLINE_DELAY="0.1"))
    try:
        deadline = time.monotonic() + 30
        while not _leases(db):
            assert time.monotonic() < deadline and slow.poll() is None, "no lease taken"
            time.sleep(0.02)
        (agent_id, pid, host), = _leases(db)
        assert pid == slow.pid and host == socket.gethostname()
        events_before = len(_rows(db))
        started = time.monotonic()
        second = run_ikigai_quick(db, "--agent", "worker", input="me too\n")
        refused_in = time.monotonic() - started
        assert second.returncode == 1
        assert second.stderr.strip().splitlines() == [
            f"Error: agent worker ({agent_id[:6]}) is busy in another ikigai process "
            f"(pid {slow.pid} on {host})"]
        assert "Offline model here" not in second.stdout
        assert not any(p.get("content") == "me too" for _, _, _, p in _rows(db))
        assert len(_rows(db)) >= events_before
        assert refused_in < 30  # at once: not after the first one's turn (3+ s)
        assert slow.poll() is None, "the refusal came after the turn, not during it"
    finally:
        out, err = _finish(slow)
    assert slow.returncode == 0, err
    assert _leases(db) == []  # released at the turn's end
    # Free again: the second process runs its turn now.
    again = run_ikigai_quick(db, "--agent", "worker", input="me too\n")
    assert again.returncode == 0, again.stderr
    assert 'You said: "me too"' in again.stdout


def run_ikigai_quick(db: Path, *args: str, input: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ikigai_tui", "--db", str(db), "run", *args],
                          input=input, capture_output=True, text=True, timeout=60)


def test_a_lease_whose_process_died_is_taken_over(tmp_path):
    import socket

    db = tmp_path / "dead.db"
    first = run_ikigai_quick(db, input="hello\n")
    assert first.returncode == 0, first.stderr
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    root_id = _agents(db)["root"][0]
    conn = sqlite3.connect(db, isolation_level=None)
    now = time.time()
    conn.execute("INSERT INTO leases VALUES (?, ?, ?, ?, ?)",
                 (root_id, gone.pid, socket.gethostname(), now, now))
    conn.close()
    second = run_ikigai_quick(db, input="after a crash\n")
    assert second.returncode == 0, second.stderr
    assert 'You said: "after a crash"' in second.stdout
    assert _leases(db) == []
