"""SIGKILL at random moments loses no committed event and corrupts nothing (SPEC §3, §13).

A child interpreter (scripts/appender.py, session mode) appends turns to one database and
reports every event id on stdout right after its transaction commits. The parent kills it
with SIGKILL at a random moment, many times over the same growing database, and after
each kill checks the file, every reported event, and that every agent's context replays.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ikigai_tui.core.events import CONTEXT_MESSAGE_KINDS
from ikigai_tui.core.replay.replayer import EMPTY, Replayer, Snapshot
from ikigai_tui.core.replay.request import build_messages
from ikigai_tui.core.session import Session, SessionSettings
from ikigai_tui.store.sqlite.store import Store
from ikigai_tui.llm.providers import Providers

APPENDER = Path(__file__).parent / "scripts" / "appender.py"
KILLS = 20
START_TIMEOUT = 20.0

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")


def payload_digest(payload: dict) -> str:
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Child:
    """The appender, with its stdout read line by line in a thread."""

    def __init__(self, args: list[str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(APPENDER), *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
        self.lines: list[str] = []
        self.first_report = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            if not raw.endswith(b"\n"):
                break  # cut mid-line by the kill: not a complete report
            line = raw.decode("utf-8").rstrip("\n")
            self.lines.append(line)
            if line.startswith("C "):
                self.first_report.set()
        self.first_report.set()

    def finish(self) -> tuple[list[str], str]:
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._thread.join(timeout=30)
        assert self.proc.stderr is not None
        err = self.proc.stderr.read().decode("utf-8", "replace")
        return self.lines, err


def parse_reports(lines: list[str]) -> dict[int, tuple[str, str, str]]:
    out: dict[int, tuple[str, str, str]] = {}
    for line in lines:
        if not line.startswith("C "):
            continue
        _, event_id, agent_id, kind, digest = line.split(" ")
        assert int(event_id) not in out, f"id {event_id} reported twice"
        out[int(event_id)] = (agent_id, kind, digest)
    return out


def check_file(db: Path, reported: dict[int, tuple[str, str, str]]) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        rows = conn.execute("SELECT id, agent_id, kind, payload FROM events ORDER BY id").fetchall()
        fts_rows = conn.execute(
            "SELECT COUNT(*) FROM events WHERE kind IN "
            "('system', 'user', 'assistant', 'tool_call', 'tool_result')").fetchone()[0]
        # The full-text index is maintained in the same transaction as the events.
        assert conn.execute("SELECT COUNT(*) FROM message_fts").fetchone()[0] == fts_rows
    finally:
        conn.close()
    by_id = {r[0]: r for r in rows}
    assert len(by_id) == len(rows)
    missing = sorted(i for i in reported if i not in by_id)
    assert not missing, f"{len(missing)} committed events lost, e.g. {missing[:5]}"
    for event_id, (agent_id, kind, digest) in reported.items():
        _, got_agent, got_kind, payload = by_id[event_id]
        assert (got_agent, got_kind) == (agent_id, kind), event_id
        assert payload_digest(json.loads(payload)) == digest, f"payload of {event_id} changed"
    # Batches are atomic: a bulk question never without its answer, a fork never half made.
    conn = sqlite3.connect(db)
    try:
        agent_ids = {r[0] for r in conn.execute("SELECT id FROM agents")}
        forks = {r[0]: r[1] for r in conn.execute("SELECT id, fork_event_id FROM agents")}
    finally:
        conn.close()
    for event_id, agent_id, kind, raw in rows:
        payload = json.loads(raw)
        if kind == "user" and " bulk question " in payload.get("content", ""):
            answer = by_id.get(event_id + 1)
            expected = payload["content"].replace(" bulk question ", " bulk answer ")
            assert answer is not None and answer[2] == "assistant", f"{event_id} lost its answer"
            assert json.loads(answer[3])["content"] == expected
        if kind == "fork" and "child" in payload:
            assert payload["child"] in agent_ids, f"fork {event_id} without its child agent"
            assert forks[payload["child"]] == event_id
    return rows


def expected_context(agent, agents: dict, rows_of: dict) -> list[int]:
    """Independent of the replayer: no command used by the child edits a context, so an
    agent's context is its parent's context before the fork event, then its own messages."""
    own = [i for i, kind, _ in rows_of[agent.id] if kind in CONTEXT_MESSAGE_KINDS]
    if agent.parent_id is None:
        return own
    inherited = expected_context(agents[agent.parent_id], agents, rows_of)
    return [i for i in inherited if i < agent.fork_event_id] + own


def inherited_base(agents: dict, rows_of: dict, agent_id: str) -> Snapshot:
    """What an agent starts from: its parent's state (replayed with Replayer.from_rows)
    as of the fork event, whole or after the fork's mark."""
    agent = agents[agent_id]
    if agent.parent_id is None:
        return EMPTY
    parent_base = inherited_base(agents, rows_of, agent.parent_id)
    parent_rows = [r for r in rows_of[agent.parent_id] if r[0] <= agent.fork_event_id]
    fork_row = parent_rows[-1]
    assert fork_row[0] == agent.fork_event_id and fork_row[1] == "fork"
    assert fork_row[2]["child"] == agent_id
    parent = Replayer.from_rows(parent_rows, parent_base)
    return parent.snapshot(after_mark=fork_row[2].get("mark_event"))


def assert_complete_tool_pairs(messages: list[dict]) -> None:
    assert not messages or messages[0]["role"] == "user"
    open_calls: set[str] = set()
    for m in messages:
        if m["role"] == "tool":
            assert m["tool_call_id"] in open_calls, "a tool result without its call"
            open_calls.discard(m["tool_call_id"])
        else:
            assert not open_calls, "a tool call without its result"
            for call in m.get("tool_calls") or []:
                open_calls.add(call["id"])
    assert not open_calls, "a tool call without its result at the end"


async def check_replay(db: Path) -> int:
    store = await Store.open(db, create=False)
    try:
        session = await Session.open(store, Providers(), SessionSettings(), create_root=False)
        records = await store.agents()
        agents = {a.id: a for a in records}
        assert sum(1 for a in records if a.parent_id is None) == 1
        # Outlines, as the session replays them (the text stays in the log).
        rows_of = {a.id: await store.agent_outline(a.id) for a in records}
        for agent in records:
            live = await session.replayer(agent.id)
            got = [i for i, _, _ in live.messages()]
            assert got == expected_context(agent, agents, rows_of), agent.name or agent.id
            base = inherited_base(agents, rows_of, agent.id)
            one_shot = Replayer.from_rows(rows_of[agent.id], base)
            assert one_shot.messages() == live.messages()
            incremental = Replayer(base)
            for row in rows_of[agent.id]:
                incremental.apply(row)
            assert incremental.messages() == live.messages()
            assert_complete_tool_pairs(build_messages(live))
        await session.close()
        return len(records)
    finally:
        await store.close()


@pytest.mark.serial  # the kill rounds' wall time is bounded (60 s)
def test_sigkill_at_random_moments_loses_no_committed_event(tmp_path):
    db = tmp_path / "crash.db"
    seed = int(os.environ.get("IKIGAI_CRASH_SEED", random.randrange(1 << 30)))
    rng = random.Random(seed)
    reported: dict[int, tuple[str, str, str]] = {}
    started = time.monotonic()
    for round_no in range(KILLS):
        child = Child(["session", str(db), f"r{round_no}"])
        if not child.first_report.wait(START_TIMEOUT):
            child.proc.kill()
        delay = rng.uniform(0.05, 0.5)
        time.sleep(delay)
        alive = child.proc.poll() is None
        if alive:
            child.proc.send_signal(signal.SIGKILL)
        lines, err = child.finish()
        context = f"round {round_no}, seed {seed}, killed after {delay:.3f}s"
        assert alive, f"the appender stopped by itself ({context}): {err[-2000:]}"
        assert child.proc.returncode == -signal.SIGKILL, (context, err[-2000:])
        new = parse_reports(lines)
        assert new, f"nothing reported before the kill ({context}): {err[-2000:]}"
        reused = sorted(set(new) & set(reported))
        assert not reused, f"ids reported committed by an earlier run were reused: {reused[:5]}"
        reported.update(new)
        check_file(db, reported)
        asyncio.run(check_replay(db))
    elapsed = time.monotonic() - started
    assert len(reported) > 20 * KILLS, f"only {len(reported)} events in {KILLS} rounds"

    # After all the crashes the database still takes a clean run to completion.
    child = Child(["session", str(db), "final", "--turns", "8"])
    lines, err = child.finish()
    assert child.proc.returncode == 0, err[-2000:]
    assert lines[-1] == "DONE"
    final = parse_reports(lines)
    assert not set(final) & set(reported)
    reported.update(final)
    rows = check_file(db, reported)
    assert asyncio.run(check_replay(db)) >= 2
    assert len(rows) >= len(reported)
    assert elapsed < 60, f"{KILLS} kill rounds took {elapsed:.1f}s"
