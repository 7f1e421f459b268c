"""A refresh of the tree, gauge and titles plans only the agents on screen and those whose
window changed (tui/usage_plans.py): with N agents loaded one after the other at start,
planning every loaded agent at every refresh was N² plans."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from ikigai_tui.core.context import ContextService
from ikigai_tui.core.session import Session

from .conftest import SIZE, idle, settle

AGENTS = 20


@pytest.fixture
def plans(monkeypatch) -> Counter:
    """Every plan made, by agent id."""
    made: Counter = Counter()
    plan = ContextService.plan

    async def counted(self, agent_id: str, *, messages: bool = False):
        made[agent_id] += 1
        return await plan(self, agent_id, messages=messages)

    monkeypatch.setattr(ContextService, "plan", counted)
    return made


async def _forked(bench) -> list[str]:
    async with bench.prep() as session:
        root = session.tree.root.id
        for i in range(AGENTS):
            await session.command(root, f"/fork --name kid{i}")
        return [a.id for a in session.tree if a.id != root]


async def test_loading_twenty_agents_plans_each_about_once(bench, plans, monkeypatch):
    kids = await _forked(bench)
    replayer = Session.replayer

    async def slow_load(self, agent_id: str):
        # Each load longer than the refresh's 30 ms coalescing: one refresh per load.
        if self.tree[agent_id].replayer is None:
            await asyncio.sleep(0.04)
        return await replayer(self, agent_id)

    monkeypatch.setattr(Session, "replayer", slow_load)
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        while any(app.session.tree[k].replayer is None for k in kids):
            await pilot.pause(0.05)
        await idle(pilot)
        off_screen = {k: plans[k] for k in kids}
        assert max(off_screen.values()) <= 2, off_screen  # was once per refresh after its load
        assert sum(off_screen.values()) <= 2 * AGENTS, off_screen
        assert all(app.usage_plans.get(k) is not None for k in kids)  # the tree shows each


async def test_a_change_to_one_agent_plans_it_and_the_focused_one_only(bench, plans):
    kids = await _forked(bench)
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        while any(app.session.tree[k].replayer is None for k in kids):
            await pilot.pause(0.05)
        await idle(pilot)
        plans.clear()
        await app.session.command(kids[3], "/pin remember the orders service")
        await idle(pilot)
        assert set(plans) == {app.focused_agent, kids[3]}, plans
        row = app.agent_tree.node_for(kids[3]).label.plain
        assert app.usage_plans.get(kids[3]).tokens > 0 and "/100K" in row, row  # up to date


def test_which_notices_make_which_windows_stale():
    from types import SimpleNamespace

    from ikigai_tui.core.events import Event
    from ikigai_tui.core.notices import AgentChanged, EventsCommitted, StreamDelta, TurnFinished
    from ikigai_tui.tui.usage_plans import UsagePlans

    agents = {name: SimpleNamespace(id=name, model=model) for name, model in
              [("a", "m1"), ("b", "m1"), ("c", "m2")]}
    class Tree:
        def __init__(self) -> None:
            self.agents = agents

        def __iter__(self):
            return iter(agents.values())

    session = SimpleNamespace(tree=Tree(), model_of=lambda agent: agent.model)
    plans = UsagePlans()
    plans.mark(StreamDelta("a", "piece"), session)
    assert plans.stale == set()  # a reply's pieces change no window
    plans.mark(AgentChanged("c"), session)
    event = Event(7, "b", "user", {"content": "hi"}, 0.0)
    plans.mark(EventsCommitted([event]), session)
    assert plans.stale == {"b", "c"}
    plans.stale.clear()
    plans.mark(TurnFinished("a", True), session)  # its model's factor may have learned
    assert plans.stale == {"a", "b"}
