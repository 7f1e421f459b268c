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


def contents(replayer) -> list[str]:
    return [p["content"] for _i, _k, p in replayer.messages()]


async def test_ancestors_loaded_first_or_not_and_threaded_or_not_give_the_same_context(
        session, sessions, monkeypatch):
    root, kid, grandkid = await build(session)
    expected = {a: contents(await session.replayer(a)) for a in (kid, grandkid)}
    assert "root question 0" in expected[grandkid] and "root question 1" not in expected[kid]
    assert "root after question 0" not in expected[kid]  # written after the fork

    # Ancestors loaded first: the children reuse their histories, no second read.
    first = await sessions()
    reads: list[str] = []
    agent_rows = first.store.agent_rows

    async def spy(agent_id, upto=None):
        reads.append(agent_id)
        return await agent_rows(agent_id, upto)

    monkeypatch.setattr(first.store, "agent_rows", spy)
    await first.replayer(root)
    await first.replayer(kid)
    await first.replayer(grandkid)
    assert reads == [root, kid, grandkid]  # each log read once
    assert {a: contents(await first.replayer(a)) for a in (kid, grandkid)} == expected

    # Nothing loaded before: the lineage is read from the log.
    cold = await sessions()
    assert contents(await cold.replayer(grandkid)) == expected[grandkid]
    assert contents(await cold.replayer(kid)) == expected[kid]

    # Every replay in a worker thread.
    monkeypatch.setattr(replays_module, "THREAD_ROWS", 1)
    threaded = await sessions()
    assert contents(await threaded.replayer(grandkid)) == expected[grandkid]
    assert contents(await threaded.replayer(root)) == contents(await session.replayer(root))
