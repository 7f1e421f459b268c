"""The agents table is a cache of the log: its derived columns rebuilt from the events
give the same tree (names, models, statuses, budgets, forks)."""

from __future__ import annotations

import asyncio
import json
import sqlite3

from ikigai_tui.core.agents import derive_agents
from ikigai_tui.core.session import Session, SessionSettings
from ikigai_tui.store.sqlite.rebuild import rebuild_agents
from ikigai_tui.store.sqlite.store import Store
from ikigai_tui.llm.providers import Providers
from tests.conftest import run_ikigai


async def _scenario(db) -> None:
    store = await Store.open(db)
    session = await Session.open(store, Providers(), SessionSettings(budget=50_000))
    root = session.tree.root
    await session.command(root.id, "/fork --name alpha")
    await session.command(root.id, "/fork --name beta --model openai/gpt-4o")
    alpha = session.tree.resolve("alpha")
    await session.command(alpha.id, "/fork --name gamma")
    await session.command(alpha.id, "/fork")
    await session.command(alpha.id, "/model anthropic/claude-sonnet-4-5")
    await session.command(root.id, "/kill gamma")
    await session.close()
    await store.close()


def _agents_json(db) -> list:
    proc = run_ikigai("--db", str(db), "agents", "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_blanked_derived_columns_are_rebuilt_from_the_events(tmp_path):
    db = tmp_path / "x.db"
    asyncio.run(_scenario(db))
    before_json = _agents_json(db)
    conn = sqlite3.connect(db, isolation_level=None)
    before = conn.execute("SELECT * FROM agents ORDER BY rowid").fetchall()
    # Everything of a child but its id; a root keeps its genesis (id, time, first model).
    conn.execute("UPDATE agents SET parent_id = NULL, name = NULL, model = '', "
                 "status = 'idle', created_at = 0, fork_event_id = NULL, budget = NULL "
                 "WHERE parent_id IS NOT NULL")
    conn.execute("UPDATE agents SET status = 'dead'")  # even a wrong status
    conn.execute("UPDATE agents SET status = 'idle' WHERE name = 'root'")
    assert conn.execute("SELECT * FROM agents ORDER BY rowid").fetchall() != before

    async def rebuild() -> None:
        store = await Store.open(db)
        try:
            await rebuild_agents(store)
        finally:
            await store.close()

    asyncio.run(rebuild())
    assert conn.execute("SELECT * FROM agents ORDER BY rowid").fetchall() == before
    conn.close()
    assert _agents_json(db) == before_json
    assert [a["name"] for a in before_json].count("gamma") == 1
    assert {a["name"]: a["status"] for a in before_json}["gamma"] == "dead"


def test_derive_agents_is_a_pure_function_of_the_events(tmp_path):
    db = tmp_path / "x.db"
    asyncio.run(_scenario(db))

    async def read():
        store = await Store.open(db)
        try:
            return await store.agents(), await store.events()
        finally:
            await store.close()

    rows, events = asyncio.run(read())
    roots = [r for r in rows if r.parent_id is None]
    assert derive_agents(events, roots) == rows
