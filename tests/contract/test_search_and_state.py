"""Search and small state (token factors) through the ports."""

from __future__ import annotations

from ikigai_tui.core.events import WriteBatch
from tests.contract.test_event_log import with_agents


async def test_search_finds_messages_of_the_given_agents_only(backend):
    log = await with_agents(backend, "a", "b")
    try:
        batch = WriteBatch()
        batch.add("a", "user", {"content": "the quick brown fox"})
        batch.add("b", "user", {"content": "a quick red fox"})
        batch.add("a", "mark", {"name": "fox"})
        events = await log.write(batch)
        assert await log.search("fox", ["a"]) == [events[0]]
        assert {e.id for e in await log.search("quick", ["a", "b"])} == {events[0].id, events[1].id}
        assert await log.search("nothing", ["a", "b"]) == []
    finally:
        await log.close()


async def test_token_factors_are_kept_per_model_and_replaced(backend):
    log = await with_agents(backend, "a")
    try:
        assert await log.token_factors() == {}
        batch = WriteBatch()
        batch.factors.append(("m", 1.25, 3))
        await log.write(batch)
        batch = WriteBatch()
        batch.factors.append(("m", 1.5, 4))
        batch.factors.append(("n", 0.9, 1))
        await log.write(batch)
        again = await backend.open()
        try:
            assert await again.token_factors() == {"m": (1.5, 4), "n": (0.9, 1)}
        finally:
            await again.close()
    finally:
        await log.close()


async def test_search_takes_alternatives_of_each_word(backend):
    """/recall's queries (core/handlers/recall.py fts_query): each topic word as any of its
    forms, all words required, on both engines."""
    from ikigai_tui.core.handlers.recall import fts_query

    log = await with_agents(backend, "a")
    try:
        batch = WriteBatch()
        batch.add("a", "user", {"content": "my cat scratches the sofa"})
        batch.add("a", "user", {"content": "the database schemas of orders"})
        batch.add("a", "user", {"content": "cats and dogs at the database"})
        cat, schema, both = await log.write(batch)
        assert {e.id for e in await log.search(fts_query("cats"), ["a"])} == {cat.id, both.id}
        assert [e.id for e in await log.search(fts_query("what about the database schema?"),
                                               ["a"])] == [schema.id]
        assert [e.id for e in await log.search(fts_query("cat database"), ["a"])] == [both.id]
        assert await log.search(fts_query("okapi schema"), ["a"]) == []
    finally:
        await log.close()


async def test_search_keys_are_the_newest_ids_of_the_given_agents(backend):
    """Find as you type (tui/find.py): ids and agents only, newest first, at most `limit`."""
    log = await with_agents(backend, "a", "b")
    try:
        batch = WriteBatch()
        batch.add("a", "user", {"content": "the database schema"})
        batch.add("b", "user", {"content": "a database elsewhere"})
        batch.add("a", "assistant", {"content": "databases are tables"})
        first, other, second = await log.write(batch)
        assert await log.search_keys('"datab"*', ["a"]) == [(second.id, "a"), (first.id, "a")]
        assert await log.search_keys('"datab"* "sch"*', ["a", "b"]) == [(first.id, "a")]
        assert await log.search_keys('"datab"*', ["a", "b"], 2) == [(second.id, "a"), (other.id, "b")]
        assert await log.search_keys('"okapi"*', ["a"]) == []
    finally:
        await log.close()
