"""The local matcher's index in SQLite (the MatchIndex port): message vectors kept in
`message_vectors` (schema 5), words looked up in the full-text index of /recall.

Vectors are kept in blocks (one row per batch the matcher computed, up to 512 messages,
with the range of ids it holds), not one row per message: a context of 100,000 messages
reads back as ~200 rows (~30 ms) instead of 100,000 (~150 ms and a Python object per
message). A block is written once, in one transaction, under the connection's lock like
every other write, and never changed.
"""

from __future__ import annotations

from collections.abc import Sequence

from ikigai_tui.core.ports import StoreError, VectorBlock

VECTORS_SCHEMA = 5


def fts_term(word: str) -> str:
    """An FTS5 query for the term `word` (for terms starting with it when it ends in *),
    quoted so that no other character of it is read as query syntax."""
    prefix = word.endswith("*")
    word = word[:-1] if prefix else word
    return '"' + word.replace('"', '""') + '"' + ("*" if prefix else "")


def _int64(raw: bytes) -> int:
    return int.from_bytes(raw, "little", signed=True)


class MatchIndexRows:
    """Mixed into the SQLite store: needs _db, _lock, _fetch, _writing, _rollback,
    readonly, version, path."""

    async def message_vectors(self, model: str, low: int, high: int) -> list[VectorBlock]:
        if self.version < VECTORS_SCHEMA:  # type: ignore[attr-defined]
            return []  # an older file opened read-only: nothing kept
        rows = await self._fetch(  # type: ignore[attr-defined]
            "SELECT ids, tokens, vectors FROM message_vectors "
            "WHERE model = ? AND low <= ? AND high >= ? ORDER BY rowid", (model, high, low))
        return [VectorBlock(*row) for row in rows]

    async def save_message_vectors(self, model: str, block: VectorBlock) -> None:
        if not block.ids:
            return
        if len(block.ids) % 8 or len(block.tokens) != len(block.ids):
            raise ValueError("a vector block needs one int64 id and token count per message")
        if self.readonly:  # type: ignore[attr-defined]
            raise StoreError(f"cannot write to {self.path}: it was opened read-only")  # type: ignore[attr-defined]
        db = self._db  # type: ignore[attr-defined]
        async with self._lock:  # type: ignore[attr-defined]
            with self._writing():  # type: ignore[attr-defined]
                await db.execute(
                    "INSERT INTO message_vectors (model, low, high, ids, tokens, vectors) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (model, _int64(block.ids[:8]), _int64(block.ids[-8:]), block.ids,
                     block.tokens, block.vectors))

    async def word_hits(self, words: Sequence[str], low: int, high: int) -> dict[str, list[int]]:
        hits: dict[str, list[int]] = {}
        for word in dict.fromkeys(words):
            rows = await self._fetch(  # type: ignore[attr-defined]
                "SELECT rowid FROM message_fts WHERE message_fts MATCH ? "
                "AND rowid BETWEEN ? AND ?", (fts_term(word), low, high))
            hits[word] = [r[0] for r in rows]
        return hits
