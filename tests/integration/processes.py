"""Helpers of the multi-process tests: real `ikigai` processes and the rows they leave."""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from ikigai_tui.store.sqlite.store import Store
from ikigai_tui.support.urls import is_url

APPENDER = Path(__file__).parent / "scripts" / "appender.py"


def proc_env(**extra: str) -> dict:
    env = dict(os.environ)
    env.update(extra)
    return env


def start_ikigai(db: Path, *args: str, **popen) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "ikigai_tui", "--db", str(db), *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen,
    )


def finish_proc(proc: subprocess.Popen, timeout: float = 90) -> tuple[str, str]:
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise AssertionError(f"timed out; stderr: {err[-2000:]}") from None
    return out, err


def _pg_rows(url: str, sql: str) -> list[tuple]:
    """The rows of `sql` in a PostgreSQL log (its default schema, as tests make them)."""
    import asyncpg

    async def fetch() -> list[tuple]:
        con = await asyncpg.connect(url, server_settings={"search_path": "ikigai"})
        try:
            return [tuple(r) for r in await con.fetch(sql)]
        finally:
            await con.close()

    return asyncio.run(fetch())


def log_rows(db: Path | str) -> list[tuple[int, str, str, dict]]:
    if is_url(db):
        rows = _pg_rows(str(db), "SELECT id, agent_id, kind, payload FROM events ORDER BY id")
        assert [r[0] for r in rows] == list(range(1, len(rows) + 1))  # gapless, once each
        return [(i, a, k, json.loads(p)) for i, a, k, p in rows]
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


def agent_rows(db: Path) -> dict[str, tuple[str, str | None]]:
    """name -> (id, parent_id)"""
    conn = sqlite3.connect(db)
    try:
        return {n: (i, p) for i, n, p in conn.execute("SELECT id, name, parent_id FROM agents")}
    finally:
        conn.close()


def check_conversation(rows, agent_id: str, texts: list[str]) -> None:
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


def finish_with_input(proc: subprocess.Popen, text: str) -> tuple[str, str]:
    try:
        return proc.communicate(text, timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise AssertionError(f"timed out; stderr: {err[-2000:]}") from None


async def wait_until(predicate, timeout: float = 10.0) -> bool:
    """Waits (the event loop keeps running: the session's poller with it) until true."""
    deadline = time.monotonic() + timeout
    while not (await result if inspect.isawaitable(result := predicate()) else result):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.01)
    return True


async def open_live(db: Path):
    from ikigai_tui.core.session import Session, SessionSettings
    from ikigai_tui.llm.providers import Providers

    store = await Store.open(db)
    return store, await Session.open(store, Providers(), SessionSettings())


def texts_of(replayer, bodies: dict[int, dict]) -> list[str]:
    """The texts of the replayer's user and assistant events, from `bodies` (the
    replayer holds outlines: see texts_in)."""
    return [bodies[row[0]].get("content") for row in replayer.history
            if row[1] in ("user", "assistant")]


async def texts_in(session, replayer) -> list[str]:
    """texts_of, with the bodies read from the log through the session."""
    ids = [row[0] for row in replayer.history if row[1] in ("user", "assistant")]
    return texts_of(replayer, await session.bodies.get(ids))


def lease_rows(db: Path | str) -> list[tuple]:
    if is_url(db):
        try:
            return _pg_rows(str(db), "SELECT agent_id, pid, host FROM leases")
        except Exception:  # not made yet (the log's first process still starting)
            return []
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT agent_id, pid, host FROM leases").fetchall()
    finally:
        conn.close()
