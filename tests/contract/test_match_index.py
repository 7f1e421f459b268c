"""The local matcher's index through the port: vector blocks kept per model and found by
the range of message ids they hold, and
which messages hold a word (the full-text index, as a term or by prefix)."""

from __future__ import annotations

import pytest

from ikigai_tui.core.events import WriteBatch
from ikigai_tui.core.ports import StoreError, VectorBlock
from tests.contract.test_event_log import with_agents


def block(*ids: int, dim: int = 2) -> VectorBlock:
    return VectorBlock(b"".join(i.to_bytes(8, "little", signed=True) for i in ids),
                       b"".join((i * 10).to_bytes(8, "little") for i in ids),
                       b"".join(bytes([i % 256]) * (2 * dim) for i in ids))


async def test_vector_blocks_are_kept_per_model_and_found_by_id_range(backend):
    log = await with_agents(backend, "a")
    try:
        assert await log.message_vectors("m", 1, 100) == []
        first, second, third = block(1, 2, 3), block(3, 7), block(20, 30)
        for b in (first, second, third):
            await log.save_message_vectors("m", b)
        await log.save_message_vectors("other", block(1))
        await log.save_message_vectors("m", block())  # nothing to keep
        assert await log.message_vectors("m", 1, 100) == [first, second, third]
        assert await log.message_vectors("m", 3, 3) == [first, second]  # oldest first
        assert await log.message_vectors("m", 4, 6) == [second]  # its range covers them
        assert await log.message_vectors("m", 8, 19) == []
        assert await log.message_vectors("m", 25, 1000) == [third]
        assert await log.message_vectors("other", 0, 5) == [block(1)]
        again = await backend.open()
        try:
            assert await again.message_vectors("m", 30, 30) == [third]
        finally:
            await again.close()
    finally:
        await log.close()


async def test_word_hits_are_prefix_matches_within_the_id_range(backend):
    log = await with_agents(backend, "a", "b")
    try:
        batch = WriteBatch()
        batch.add("a", "user", {"content": "the database schema"})
        batch.add("a", "assistant", {"content": "Databases hold schemas"})
        batch.add("b", "user", {"content": "a cooking recipe"})
        batch.add("a", "tool_call", {"name": "sql", "arguments": "{\"query\": \"drop schema\"}"})
        batch.add("a", "mark", {"name": "schema"})
        ev = await log.write(batch)
        ids = [e.id for e in ev]
        low, high = ids[0], ids[-1]
        hits = await log.word_hits(["databas*", "schema*", "cook*", "absent*", 'quo"te*'], low, high)
        assert hits == {"databas*": [ids[0], ids[1]], "schema*": [ids[0], ids[1], ids[3]],
                        "cook*": [ids[2]], "absent*": [], 'quo"te*': []}
        assert (await log.word_hits(["schema*"], ids[1], ids[2]))["schema*"] == [ids[1]]
        exact = await log.word_hits(["schema", "databas", "a"], low, high)
        assert exact == {"schema": [ids[0], ids[3]], "databas": [], "a": [ids[2]]}
    finally:
        await log.close()


async def test_a_read_only_log_refuses_to_keep_vectors(backend, tmp_path):
    log = await with_agents(backend, "a")
    await log.close()
    ro = await backend.open("log", readonly=True)
    try:
        with pytest.raises(StoreError):
            await ro.save_message_vectors("m", block(1))
        assert await ro.message_vectors("m", 0, 10) == []
    finally:
        await ro.close()
