"""Kept token counts in SQLite (the TokenCounts port): `message_tokens` (schema 6).

Counts are kept in blocks, as the matcher's vectors are (vectors.py): one row per batch
of counted messages with the range of ids it holds, ids packed as int64 and counts as
float64. A context of 100,000 messages reads back as a few dozen rows in a few ms, not
100,000 rows and a Python object per row. A block is written once, under the
connection's lock like every other write, and never changed.
"""

from __future__ import annotations

from collections.abc import Iterable

from ikigai_tui.core.ports import StoreError, TokenBlock

TOKENS_SCHEMA = 6


def _int64(raw: bytes) -> int:
    return int.from_bytes(raw, "little", signed=True)


class TokenCountRows:
    """Mixed into the SQLite store: needs _db, _lock, _fetch, _writing, readonly,
    version, path."""

    async def token_blocks(self, encoding: str, low: int, high: int) -> list[TokenBlock]:
        if self.version < TOKENS_SCHEMA:  # type: ignore[attr-defined]
            return []  # an older file opened read-only: nothing kept
        rows = await self._fetch(  # type: ignore[attr-defined]
            "SELECT ids, tokens FROM message_tokens "
            "WHERE encoding = ? AND low <= ? AND high >= ? ORDER BY rowid", (encoding, high, low))
        return [TokenBlock(*row) for row in rows]

    async def save_token_block(self, encoding: str, block: TokenBlock) -> None:
        if not block.ids:
            return
        if len(block.ids) % 8 or len(block.tokens) != len(block.ids):
            raise ValueError("a token block needs one int64 id and one float64 count per message")
        if self.readonly:  # type: ignore[attr-defined]
            raise StoreError(f"cannot write to {self.path}: it was opened read-only")  # type: ignore[attr-defined]
        db = self._db  # type: ignore[attr-defined]
        async with self._lock:  # type: ignore[attr-defined]
            with self._writing():  # type: ignore[attr-defined]
                await db.execute(
                    "INSERT INTO message_tokens (encoding, low, high, ids, tokens) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (encoding, _int64(block.ids[:8]), _int64(block.ids[-8:]), block.ids,
                     block.tokens))

    async def text_tokens(self, encoding: str, digests: Iterable[str]) -> dict[str, float]:
        wanted = list(dict.fromkeys(digests))
        if self.version < TOKENS_SCHEMA or not wanted:  # type: ignore[attr-defined]
            return {}
        marks = ",".join("?" for _ in wanted)
        rows = await self._fetch(  # type: ignore[attr-defined]
            f"SELECT digest, tokens FROM text_tokens WHERE encoding = ? AND digest IN ({marks})",
            (encoding, *wanted))
        return dict(rows)

    async def save_text_tokens(self, encoding: str, counts: dict[str, float]) -> None:
        if not counts:
            return
        if self.readonly:  # type: ignore[attr-defined]
            raise StoreError(f"cannot write to {self.path}: it was opened read-only")  # type: ignore[attr-defined]
        db = self._db  # type: ignore[attr-defined]
        async with self._lock:  # type: ignore[attr-defined]
            with self._writing():  # type: ignore[attr-defined]
                await db.executemany(
                    "INSERT OR IGNORE INTO text_tokens (encoding, digest, tokens) VALUES (?, ?, ?)",
                    [(encoding, d, t) for d, t in counts.items()])
