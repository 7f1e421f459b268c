"""The local matcher's index in SQLite (the MatchIndex port): message vectors kept in
`message_vectors` (schema 5), words looked up in the full-text index of /recall.

Vectors are kept in blocks (blocks.py: one row per batch the matcher computed, up to 512
messages): a context of 100,000 messages reads back as ~200 rows (~30 ms) instead of
100,000 (~150 ms and a Python object per message).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from ikigai_tui.core.ports import VectorBlock
from ikigai_tui.store.sqlite.blocks import BlockRows

VECTORS_SCHEMA = 5


def fts_term(word: str) -> str:
    """An FTS5 query for the term `word` (for terms starting with it when it ends in *),
    quoted so that no other character of it is read as query syntax."""
    prefix = word.endswith("*")
    word = word[:-1] if prefix else word
    return '"' + word.replace('"', '""') + '"' + ("*" if prefix else "")


class MatchIndexRows(BlockRows):
    """Mixed into the SQLite store (see BlockRows)."""

    async def message_vectors(self, model: str, low: int, high: int) -> list[VectorBlock]:
        rows = await self._read_blocks("message_vectors", ("model", model),
                                       "ids, tokens, vectors", low, high, VECTORS_SCHEMA)
        return [VectorBlock(*row) for row in rows]

    async def save_message_vectors(self, model: str, block: VectorBlock) -> None:
        if not block.ids:
            return
        if len(block.ids) % 8 or len(block.tokens) != len(block.ids):
            raise ValueError("a vector block needs one int64 id and token count per message")
        await self._write_block("message_vectors", ("model", model), block.ids,
                                {"tokens": block.tokens, "vectors": block.vectors})

    async def word_hits(self, words: Sequence[str], low: int, high: int) -> dict[str, list[int]]:
        """Every word's hits in one trip to the connection's thread, not one per word: a
        criterion has a few words of a few forms each, and on a busy machine each trip
        waits for the thread to be scheduled."""
        wanted = list(dict.fromkeys(words))

        def job(conn: sqlite3.Connection) -> dict[str, list[int]]:
            return {word: [r[0] for r in conn.execute(
                "SELECT rowid FROM message_fts WHERE message_fts MATCH ? "
                "AND rowid BETWEEN ? AND ?", (fts_term(word), low, high))] for word in wanted}

        if not wanted:
            return {}
        with self._reading():  # type: ignore[attr-defined]
            return await self._in_connection(job)  # type: ignore[attr-defined]
