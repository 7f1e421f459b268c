"""Kept token counts in SQLite (the TokenCounts port): `message_tokens` (schema 6), in
blocks as the matcher's vectors are (blocks.py): ids packed as int64 and counts as
float64; and counts of whole texts by digest (`text_tokens`).
"""

from __future__ import annotations

from collections.abc import Iterable

from ikigai_tui.core.ports import TokenBlock
from ikigai_tui.store.sqlite.blocks import BlockRows

TOKENS_SCHEMA = 6


class TokenCountRows(BlockRows):
    """Mixed into the SQLite store (see BlockRows)."""

    async def token_blocks(self, encoding: str, low: int, high: int) -> list[TokenBlock]:
        rows = await self._read_blocks("message_tokens", ("encoding", encoding), "ids, tokens",
                                       low, high, TOKENS_SCHEMA)
        return [TokenBlock(*row) for row in rows]

    async def save_token_block(self, encoding: str, block: TokenBlock) -> None:
        if not block.ids:
            return
        if len(block.ids) % 8 or len(block.tokens) != len(block.ids):
            raise ValueError("a token block needs one int64 id and one float64 count per message")
        await self._write_block("message_tokens", ("encoding", encoding), block.ids,
                                {"tokens": block.tokens})

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
        self._check_writable()
        db = self._db  # type: ignore[attr-defined]
        async with self._lock:  # type: ignore[attr-defined]
            with self._writing():  # type: ignore[attr-defined]
                await db.executemany(
                    "INSERT OR IGNORE INTO text_tokens (encoding, digest, tokens) VALUES (?, ?, ?)",
                    [(encoding, d, t) for d, t in counts.items()])
