"""Kept blocks (the matcher's vectors, token counts) are read back without SQLite sorting
them: a temporary b-tree for ORDER BY copies every blob of the result (26 MB for 100,000
vectors), which made a new process's first /forget by meaning 50 ms slower. They still
come oldest first (tests/contract/test_match_index.py)."""

from __future__ import annotations

import sqlite3

from ikigai_tui.core.ports import TokenBlock, VectorBlock
from ikigai_tui.store.sqlite.store import Store


def _ids(*ids: int) -> bytes:
    return b"".join(i.to_bytes(8, "little", signed=True) for i in ids)


async def test_kept_blocks_are_read_without_a_sort_of_their_blobs(tmp_path):
    path = tmp_path / "log.db"
    store = await Store.open(path)
    statements: list[str] = []
    try:
        for low in (40, 1, 20):  # kept out of id order: the reads still give them oldest first
            ids = _ids(low, low + 1)
            await store.save_message_vectors("m", VectorBlock(ids, ids, bytes(2 * 4 + 8)))
            await store.save_token_block("e", TokenBlock(ids, bytes(16)))
        await store._db.set_trace_callback(statements.append)
        vectors = await store.message_vectors("m", 0, 100)
        tokens = await store.token_blocks("e", 0, 100)
        await store._db.set_trace_callback(None)
    finally:
        await store.close()
    assert [b.ids[:8] for b in vectors] == [_ids(40), _ids(1), _ids(20)]
    assert [b.ids[:8] for b in tokens] == [_ids(40), _ids(1), _ids(20)]
    reads = [s for s in statements if s.lstrip().upper().startswith("SELECT")
             and ("message_vectors" in s or "message_tokens" in s)]
    assert len(reads) == 2, statements
    conn = sqlite3.connect(path)
    try:
        for sql in reads:
            plan = " ".join(row[-1] for row in conn.execute("EXPLAIN QUERY PLAN " + sql))
            assert "TEMP B-TREE" not in plan, (sql, plan)
    finally:
        conn.close()
