"""The sliding window through a real Session (SPEC §7, offline model, SQLite): the budget
is capped to the model's input limit, the window is the same after a restart (also after
/unpin), a child inherits its parent's budget at fork, and a full context blocks sending
until /clear.
"""

from __future__ import annotations

import pytest

from ikigai_tui.cli.output import context_data
from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.provider import Limits
from ikigai_tui.core.tokens.window import CONTEXT_FULL
from tests.unit.window_helpers import chat, talk


async def test_budget_is_capped_to_the_input_limit(sessions, monkeypatch):
    session = await sessions(budget=10**9)
    root = session.tree.root.id
    assert (await session.measure(root)).budget == 200_000 - 8_192
    monkeypatch.setattr(session.providers, "limits",
                        lambda model: Limits(input=5_000, reserve=1_000, known=True))
    assert (await session.measure(root)).budget == 4_000


async def test_window_is_the_same_after_a_restart(sessions):
    session = await sessions(budget=1_500)
    root = session.tree.root
    await chat(session, 6)
    await session.command(root.id, "/mark A")
    await chat(session, 4, size=800)
    ids = [m[0] for m in (await session.replayer(root.id)).messages()]
    await session.command(root.id, f"/forget --ids {ids[-3]}")
    await chat(session, 2)
    await session.command(root.id, "/rewind A")
    await session.command(root.id, "/undo")
    before = await context_data(session, root)
    assert before["pruned_turns"] > 0
    await sessions.close(session)

    again = await sessions(budget=1_500)
    after = await context_data(again, again.tree.root)
    assert after["window_start"] == before["window_start"]
    assert [(m["id"], m["in_window"]) for m in after["messages"]] == \
        [(m["id"], m["in_window"]) for m in before["messages"]]
    assert after["tokens"] == before["tokens"]
    assert after["breakdown"] == before["breakdown"]


async def test_window_is_the_same_after_a_restart_following_unpin(sessions):
    session = await sessions(budget=1_500)
    root = session.tree.root
    await chat(session, 6)
    await session.command(root.id, "/pin " + "remember this " * 60)
    await talk(session, root.id, "one more")
    pinned = await session.measure(root.id)  # measured once the turn is over, as the TUI does
    assert pinned.pruned_turns > 0 and pinned.pins > 0
    await session.command(root.id, "/unpin 1")
    before = await context_data(session, root)
    await sessions.close(session)
    again = await sessions(budget=1_500)
    after = await context_data(again, again.tree.root)
    assert (after["window_start"], after["tokens"]) == (before["window_start"], before["tokens"])


async def test_child_inherits_the_budget_at_fork(sessions):
    session = await sessions(budget=5_000)
    root = session.tree.root
    await chat(session, 2)
    child_id = (await session.command(root.id, "/fork --name kid")).data
    child = session.tree[child_id]
    assert session.budget_of(child) == 5_000
    assert (await session.measure(child_id)).budget == 5_000
    await sessions.close(session)

    again = await sessions(budget=7_000)
    root, child = again.tree.root, again.tree[child_id]
    assert again.budget_of(child) == 5_000  # before its log is read ...
    assert (await context_data(again, child))["budget"] == 5_000  # ... and after
    assert again.budget_of(child) == 5_000
    assert (await context_data(again, root))["budget"] == 7_000
    # A grandchild forked now inherits its parent's budget, not the configured one.
    grandchild = (await again.command(child_id, "/fork")).data
    assert (await again.measure(grandchild)).budget == 5_000
    root_child = (await again.command(root.id, "/fork")).data
    assert (await again.measure(root_child)).budget == 7_000


async def test_context_full_blocks_sending_until_clear(sessions, monkeypatch):
    session = await sessions(budget=0)
    root = session.tree.root.id
    for _ in range(3):
        await talk(session, root, "fill " * 30)
    # The limit the conversation has just reached (a message that would go past it is
    # refused before it is written: see test_a_message_that_cannot_fit_is_refused).
    limit = (await session.measure(root)).tokens
    monkeypatch.setattr(session.providers, "limits",
                        lambda model: Limits(input=limit, reserve=0, known=True))
    w = await session.measure(root)
    assert w.tokens >= limit and w.state == "full" and w.budget == 0

    count = await session.store.count_events()
    with pytest.raises(CommandError) as raised:
        await session.say(root, "one more please")
    assert str(raised.value) == CONTEXT_FULL == "Context full. Use /clear to continue."
    assert await session.store.count_events() == count
    assert session.tree[root].task is None or session.tree[root].task.done()

    await session.command(root, "/clear")
    assert (await session.measure(root)).state != "full"
    await talk(session, root, "sending works again")
    r = await session.replayer(root)
    assert [e[1] for e in r.ctx.values()] == ["user", "assistant"]
