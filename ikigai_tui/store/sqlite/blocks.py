"""Per-message data kept in blocks (token counts, tokens.py; the matcher's vectors,
vectors.py): one row per batch of messages with the range of ids it holds (`low`, `high`),
the ids packed as little-endian int64 and the values as packed arrays beside them. A
context of 100,000 messages reads back as a few hundred rows, not 100,000 rows and a
Python object per row. A block is written once, under the connection's lock like every
other write, and never changed."""

from __future__ import annotations

from typing import Any

from ikigai_tui.core.ports import StoreError


def _int64(raw: bytes) -> int:
    return int.from_bytes(raw, "little", signed=True)


class BlockRows:
    """Mixed into the SQLite store: needs _db, _lock, _fetch, _writing, readonly,
    version, path."""

    def _check_writable(self) -> None:
        if self.readonly:  # type: ignore[attr-defined]
            raise StoreError(f"cannot write to {self.path}: it was opened read-only")  # type: ignore[attr-defined]

    async def _read_blocks(self, table: str, key: tuple[str, str], columns: str, low: int,
                           high: int, since: int) -> list[Any]:
        """The blocks of `table` whose `key` (column, value) matches and whose ids overlap
        low..high, oldest first; none in a file older than schema `since`."""
        if self.version < since:  # type: ignore[attr-defined]
            return []  # an older file opened read-only: nothing kept
        # Put in order here, not by ORDER BY rowid: SQLite would sort the rows, blobs and
        # all, in a temporary b-tree (26 MB for 100,000 vectors: 75 ms instead of 25).
        rows = await self._fetch(  # type: ignore[attr-defined]
            f"SELECT rowid, {columns} FROM {table} WHERE {key[0]} = ? AND low <= ? AND high >= ?",
            (key[1], high, low))
        rows.sort(key=lambda row: row[0])
        return [row[1:] for row in rows]

    async def _write_block(self, table: str, key: tuple[str, str], ids: bytes,
                           values: dict[str, bytes]) -> None:
        self._check_writable()
        names = ", ".join(values)
        marks = ", ".join("?" for _ in values)
        async with self._lock:  # type: ignore[attr-defined]
            with self._writing():  # type: ignore[attr-defined]
                await self._db.execute(  # type: ignore[attr-defined]
                    f"INSERT INTO {table} ({key[0]}, low, high, ids, {names}) "
                    f"VALUES (?, ?, ?, ?, {marks})",
                    (key[1], _int64(ids[:8]), _int64(ids[-8:]), ids, *values.values()))
