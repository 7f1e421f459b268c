"""Pins are the permanent level of memory (SPEC §9): always sent, never pruned by the
window, never compacted (they are not messages, so no compact event can list them),
kept by /clear; /pins, /context and `context --json` show each with its tokens."""

from __future__ import annotations

from ikigai_tui.cli.output import context_data
from ikigai_tui.core.events import WriteBatch
from tests.unit.window_helpers import chat


async def _pinned(session, root):
    await session.command(root, "/pin always answer briefly")
    await session.command(root, "/pin the user is called Ada")


async def test_pins_are_sent_while_the_window_prunes_and_after_clear(sessions):
    session = await sessions(budget=1_500)
    root = session.tree.root.id
    await _pinned(session, root)
    await chat(session, 10)
    plan = await session.plan(root)
    r = await session.replayer(root)
    assert len(plan.window_ids) < len(r.ctx)  # the window pruned turns...
    assert plan.pins == ("always answer briefly", "the user is called Ada")  # ...not the pins
    assert "1. always answer briefly" in plan.system and "2. the user is called Ada" in plan.system
    await session.command(root, "/clear")
    plan = await session.plan(root)
    assert plan.window_ids == [] and len(plan.pins) == 2 and "Ada" in plan.system


async def test_a_compaction_cannot_take_the_pins(sessions):
    session = await sessions()
    root = session.tree.root.id
    await _pinned(session, root)
    await chat(session, 3)
    r = await session.replayer(root)
    every_id = list(r.ctx)
    pin_events = [row[0] for row in r.history if row[1] == "pin"]
    batch = WriteBatch()
    # Even a compaction that names the pin events themselves replaces only messages.
    batch.add(root, "compact", {"ids": every_id + pin_events, "summary": "all of it"})
    await session.commit(batch)
    r = await session.replayer(root)
    assert [e[1] for e in r.ctx.values()] == ["summary"]
    assert r.pins == ["always answer briefly", "the user is called Ada"]
    assert not set(pin_events) & set(r.ctx[next(iter(r.ctx))][2]["replaced"])
    plan = await session.plan(root)
    assert plan.pins == tuple(r.pins) and "Ada" in plan.system


async def test_pins_listed_with_their_tokens_in_pins_context_and_json(sessions):
    session = await sessions()
    root = session.tree.root.id
    await _pinned(session, root)
    counter = session.meter(session.tree[root]).counter
    expected = [counter.scale(counter.text(p)) for p in ("always answer briefly",
                                                         "the user is called Ada")]
    assert all(n > 0 for n in expected)
    listed = await session.command(root, "/pins")
    assert listed.lines == [f"1. always answer briefly  ({expected[0]} tokens)",
                            f"2. the user is called Ada  ({expected[1]} tokens)"]
    context = (await session.command(root, "/context")).lines
    at = context.index("Pins (always sent, never pruned nor compacted):")
    assert context[at + 1:] == [f"  1. {expected[0]:>9,}  always answer briefly",
                                f"  2. {expected[1]:>9,}  the user is called Ada"]
    data = await context_data(session, session.tree[root])
    assert data["pins"] == [
        {"number": 1, "text": "always answer briefly", "tokens": expected[0]},
        {"number": 2, "text": "the user is called Ada", "tokens": expected[1]},
    ]
