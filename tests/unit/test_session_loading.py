"""Loading an agent's replayer: the same context whichever way it is loaded.

A child's inheritance is its ancestors replayed up to each fork. When an ancestor is
already loaded its history is reused instead of reading and decoding the log again, and
a long log is replayed in a worker thread; neither may change what the agent sees.
"""

from __future__ import annotations

from ikigai_tui.core import replays as replays_module
from ikigai_tui.core.events import WriteBatch
from ikigai_tui.core.session import Session


async def write_turns(session: Session, agent_id: str, turns: int, tag: str) -> list[int]:
    batch = WriteBatch()
    for n in range(turns):
        batch.add(agent_id, "user", {"content": f"{tag} question {n}"})
        batch.add(agent_id, "assistant", {"content": f"{tag} answer {n}"})
    await session.commit(batch)
    return [i for i, _k, _p in (await session.replayer(agent_id)).messages()][-2 * turns:]


async def build(session: Session) -> tuple[str, str, str]:
    root = session.tree.root.id
    ids = await write_turns(session, root, 20, "root")
    await session.command(root, "/mark M")
    await session.command(root, f"/forget --ids {ids[2]},{ids[3]}")
    kid = (await session.command(root, "/fork --name kid")).data
    await write_turns(session, root, 5, "root after")
    await write_turns(session, kid, 10, "kid")
    grandkid = (await session.command(kid, "/fork --name grandkid")).data
    await write_turns(session, grandkid, 3, "grandkid")
    return root, kid, grandkid


async def contents(session, agent_id: str) -> list[str]:
    """The agent's context texts (read back from the log: the replayer holds outlines)."""
    return [p["content"] for _i, _k, p in await session.messages(agent_id)]


async def test_ancestors_loaded_first_or_not_and_threaded_or_not_give_the_same_context(
        session, sessions, monkeypatch):
    root, kid, grandkid = await build(session)
    expected = {a: (await contents(session, a)) for a in (kid, grandkid)}
    assert "root question 0" in expected[grandkid] and "root question 1" not in expected[kid]
    assert "root after question 0" not in expected[kid]  # written after the fork

    # Ancestors loaded first: the children reuse their histories, no second read.
    first = await sessions()
    reads: list[str] = []
    agent_outline = first.store.agent_outline

    async def spy(agent_id, upto=None):
        reads.append(agent_id)
        return await agent_outline(agent_id, upto)

    monkeypatch.setattr(first.store, "agent_outline", spy)
    await first.replayer(root)
    await first.replayer(kid)
    await first.replayer(grandkid)
    assert reads == [root, kid, grandkid]  # each log read once
    assert {a: (await contents(first, a)) for a in (kid, grandkid)} == expected

    # Nothing loaded before: the lineage is read from the log.
    cold = await sessions()
    assert (await contents(cold, grandkid)) == expected[grandkid]
    assert (await contents(cold, kid)) == expected[kid]

    # Every replay in a worker thread.
    monkeypatch.setattr(replays_module, "THREAD_ROWS", 1)
    threaded = await sessions()
    assert (await contents(threaded, grandkid)) == expected[grandkid]
    assert (await contents(threaded, root)) == (await contents(session, root))
