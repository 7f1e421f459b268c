"""Bounded memory of an agent (issue 14): the replayed state holds each message's outline
(no text); the text is read from the log on demand, through the port, in batches, with a
cache bounded by bytes; the request of a turn reads the bodies of its window only; the
context with its text is the same as what was written."""

from __future__ import annotations

from ikigai_tui.core.replay.bodies import NO_BODY, Bodies, needs_body, outline, outline_row
from ikigai_tui.core.events import WriteBatch
from ikigai_tui.core.session import Session, SessionSettings
from ikigai_tui.store.sqlite.store import Store
from ikigai_tui.llm.providers import Providers
from tests.unit.window_helpers import talk


def test_an_outline_is_the_payload_without_its_text():
    assert outline("user", {"content": "hello"}) is NO_BODY
    assert outline("tool_call", {"call_id": "c1", "name": "f", "arguments": "{}"}) == \
        {"call_id": "c1", "name": "f"}
    assert outline("tool_result", {"call_id": "c1", "call_event": 4, "content": "x",
                                   "is_error": False}) == \
        {"call_id": "c1", "call_event": 4, "is_error": False}
    mark = {"name": "A"}
    assert outline("mark", mark) is mark  # other kinds are kept whole
    row = (7, "assistant", {"content": "a reply", "interrupted": True})
    assert outline_row(row) == (7, "assistant", {"interrupted": True})
    assert needs_body("assistant", {"interrupted": True})
    assert not needs_body("assistant", {"content": "x"})
    assert not needs_body("summary", {"content": "x"})


class FakeLog:
    def __init__(self, payloads: dict[int, dict]) -> None:
        self.data = payloads
        self.asked: list[list[int]] = []

    async def payloads(self, ids):
        self.asked.append(list(ids))
        return {i: self.data[i] for i in ids if i in self.data}


async def test_the_cache_is_bounded_by_bytes_and_evicts_the_least_recently_used():
    log = FakeLog({i: {"content": "x" * 1000} for i in range(1, 101)})
    bodies = Bodies(log, limit=5 * 1200)
    got = await bodies.get([1, 2, 3, 4, 5])
    assert sorted(got) == [1, 2, 3, 4, 5] and bodies.used <= bodies.limit
    await bodies.get([1])  # a hit: read nothing, and 1 is now the most recent
    assert log.asked == [[1, 2, 3, 4, 5]]
    await bodies.get([6])  # evicts 2, the least recently used
    await bodies.get([1, 2])
    assert log.asked[-1] == [2]
    await bodies.get(range(10, 100), cache=False)  # a bulk read passes the cache by
    assert bodies.used <= bodies.limit
    log.asked.clear()
    await bodies.get([1, 6])
    assert log.asked == [], "a bulk read evicted the cached bodies"
    bodies.put(200, {"content": "y" * 10**6})  # larger than the whole cache: not kept
    assert bodies.used <= bodies.limit


async def _session(path, budget: int = 100_000) -> tuple[Session, Store]:
    store = await Store.open(path)
    return await Session.open(store, Providers(), SessionSettings(budget=budget)), store


async def test_a_replayed_agent_holds_no_text_and_reads_it_back_whole(db_path):
    session, store = await _session(db_path)
    root = session.tree.root.id
    batch = WriteBatch()
    written = []
    for i in range(50):
        payload = {"content": f"message {i} " + "text " * 200}
        written.append(payload)
        batch.add(root, "user" if i % 2 == 0 else "assistant", payload)
    batch.add(root, "tool_call", {"call_id": "c", "name": "list_agents", "arguments": "{\"a\": 1}"})
    await session.commit(batch)
    await session.close()
    await store.close()

    session, store = await _session(db_path)
    try:
        r = await session.replayer(root)
        for key, (_seq, kind, payload) in r.ctx.items():
            assert "content" not in payload and "arguments" not in payload, (key, kind)
        assert all("content" not in row[2] for row in r.history if row[1] in ("user", "assistant"))
        messages = await session.messages(root)
        assert [p for _, _, p in messages[:50]] == written
        assert messages[50][2] == {"call_id": "c", "name": "list_agents", "arguments": "{\"a\": 1}"}
    finally:
        await session.close()
        await store.close()


async def test_a_turn_reads_the_bodies_of_its_window_only(db_path):
    session, store = await _session(db_path, budget=3_000)
    root = session.tree.root.id
    batch = WriteBatch()
    for i in range(200):
        batch.add(root, "user" if i % 2 == 0 else "assistant", {"content": f"m{i} " + "w " * 300})
    await session.commit(batch)
    await session.close()
    await store.close()

    session, store = await _session(db_path, budget=3_000)
    try:
        await session.plan(root)  # counts (all bodies, past the cache) and keeps the counts
        asked: list[int] = []
        real = store.payloads

        async def spy(ids):
            asked.extend(ids)
            return await real(ids)

        store.payloads = spy
        plan = await session.plan(root, messages=True)
        assert plan.window.pruned_turns > 0
        assert set(asked) <= set(plan.window_ids) and asked
        assert [m["content"] for m in plan.messages[-2:]] == \
            [p["content"] for _, _, p in (await session.messages(root))[-2:]]
        asked.clear()
        await talk(session, root, "one more question")  # the new messages' bodies are cached
        await session.plan(root, messages=True)
        assert asked == []
    finally:
        await session.close()
        await store.close()
