"""Rewriting the agents rows from the events (core.agents.derive_agents): the table is a
cache of the log, so a lost or wrong column can be rebuilt, and another backend can
build its own from the log alone."""

from __future__ import annotations

import json

from ikigai_tui.core.agents import derive_agents
from ikigai_tui.core.events import AgentRecord, Event

KINDS = ("fork", "model", "kill", "revive", "rename")


async def rebuild_agents(store) -> list[AgentRecord]:
    """Set every agent row's derived columns to what the events say; returns the rows.
    A root keeps its own row (its genesis: id, time, first model). A child whose fork
    event predates names in fork events keeps the name its row has."""
    rows = {r.id: r for r in await store.agents()}
    marks = ",".join("?" for _ in KINDS)
    found = await store._fetch(
        "SELECT id, agent_id, kind, payload, created_at FROM events "
        f"WHERE kind IN ({marks}) ORDER BY id", KINDS)
    events = [Event(i, a, k, json.loads(p), c) for i, a, k, p, c in found]
    named_forks = {e.agent_id for e in events if e.kind == "fork" and "name" in e.payload}
    children = {e.agent_id for e in events if e.kind == "fork" and "parent" in e.payload}
    roots = [r._replace(parent_id=None) for r in rows.values() if r.id not in children]
    derived = []
    for rec in derive_agents(events, roots):
        old = rows.get(rec.id)
        if rec.name is None and old is not None and rec.id not in named_forks:
            rec = rec._replace(name=old.name)
        derived.append(rec)
    db = store._db
    async with store._lock:
        await _write(store, db, derived)
    return derived


async def _write(store, db, derived: list[AgentRecord]) -> None:
    with store._writing():
        await db.execute("BEGIN IMMEDIATE")
        try:
            await db.executemany(
                "UPDATE agents SET parent_id = ?, name = ?, model = ?, status = ?, "
                "created_at = ?, fork_event_id = ?, budget = ? WHERE id = ?",
                [(r.parent_id, r.name, r.model, r.status, r.created_at, r.fork_event_id,
                  r.budget, r.id) for r in derived])
            await db.execute("COMMIT")
        except BaseException:
            await store._rollback()
            raise
