"""Reading an agent's events for its replay, and message bodies by id (mixed into the
SQLite store)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
from array import array
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ikigai_tui.core.events import CONTEXT_MESSAGE_KINDS, EventRow
from ikigai_tui.core.replay.rows import Rows
from ikigai_tui.store.sqlite.schema import OUTLINE, OUTLINE_INDEX, OUTLINE_SINCE

ROW_BATCH = 5000
JOB_ROWS = 20_000  # rows read and decoded in one call in the connection's thread (~40 ms)
PAYLOAD_BATCH = 900  # ids in one SELECT (under SQLite's 999 parameters of old)


def _decode(out: list[EventRow], rows: list) -> None:
    out.extend([(i, k, json.loads(p)) for i, k, p in rows])


def _decode_outline(out: Rows, rows: list) -> None:
    # Straight into the arrays: no row tuple is made; a plain message's "{}" is NO_BODY.
    out.extend_encoded(rows, json.loads, CONTEXT_MESSAGE_KINDS)


class AgentRows:
    """Mixed into the SQLite store: needs _db, _reading, _in_connection, version."""

    async def agent_rows(self, agent_id: str, upto: int | None = None) -> list[EventRow]:
        """One agent's events in log order, decoded; only ids below `upto` when given."""
        return await self._agent_rows("payload", _decode, agent_id, upto, [], "events")

    async def agent_outline(self, agent_id: str, upto: int | None = None) -> Sequence[EventRow]:
        """As agent_rows, each message's payload its outline (no text), as compact `Rows`
        (ids and kinds in arrays: what the replay keeps as the agent's history)."""
        # Read from the outlines' index (schema 8); an older log opened read-only: made
        # from each payload.
        indexed = self.version >= OUTLINE_SINCE  # type: ignore[attr-defined]
        source = f"events INDEXED BY {OUTLINE_INDEX}" if indexed else "events"
        return await self._agent_rows(OUTLINE, _decode_outline, agent_id, upto, Rows(), source)

    async def _agent_rows(self, column: str, decode: Callable[[Any, list], None],
                          agent_id: str, upto: int | None, out, source: str):
        sql = f"SELECT id, kind, {column} FROM {source} WHERE agent_id = ?"
        params: tuple = (agent_id,)
        if upto is not None:
            sql += " AND id < ?"
            params = (agent_id, upto)
        # Read and decoded in the connection's thread, JOB_ROWS at a time (a long log's
        # read is not a round trip through the event loop per batch, and the loop keeps
        # its turn between jobs); decoded in batches, so the raw rows of a long log never
        # all live at once next to their decoded payloads (half the peak memory of
        # opening 100,000 events).
        cursors: list[sqlite3.Cursor] = []

        def job(conn: sqlite3.Connection) -> bool:
            if not cursors:
                cursors.append(conn.execute(sql + " ORDER BY id", params))
            cursor = cursors[0]
            for _ in range(JOB_ROWS // ROW_BATCH):
                rows = cursor.fetchmany(ROW_BATCH)
                if rows:
                    decode(out, rows)
                if len(rows) < ROW_BATCH:
                    cursors.pop().close()
                    return False
            return True

        with self._reading():  # type: ignore[attr-defined]
            try:
                while await self._in_connection(job):  # type: ignore[attr-defined]
                    pass
            finally:  # cancelled, or a batch that failed: its statement ends
                if cursors:
                    close = cursors.pop().close
                    with contextlib.suppress(Exception):
                        await self._in_connection(lambda _conn: close())  # type: ignore[attr-defined]
        return out

    async def page_keys(self, agent_id: str, kinds: Iterable[str]) -> Sequence[int]:
        """The ids of one agent's events of some kinds, in log order (a scrollback's
        whole history, for its scrollbar): ids only, no payload is read. An int64 array,
        read in batches: a list of 100,000 rows would make ~9 MB of short-lived objects,
        whose pages stay resident once other objects are made among them."""
        wanted = list(kinds)
        marks = ",".join("?" for _ in wanted)
        keys = array("q")
        with self._reading():  # type: ignore[attr-defined]
            async with self._db.execute(  # type: ignore[attr-defined]
                    f"SELECT id FROM events WHERE agent_id = ? AND kind IN ({marks}) ORDER BY id",
                    [agent_id, *wanted]) as cursor:
                while rows := await cursor.fetchmany(ROW_BATCH):
                    keys.extend(row[0] for row in rows)
        return keys

    async def payloads(self, ids: Sequence[int]) -> dict[int, dict]:
        out: dict[int, dict] = {}
        for start in range(0, len(ids), PAYLOAD_BATCH):
            part = list(ids[start:start + PAYLOAD_BATCH])
            marks = ",".join("?" * len(part))
            rows = await self._fetch(  # type: ignore[attr-defined]
                f"SELECT id, payload FROM events WHERE id IN ({marks})", part)
            if len(rows) >= 200:
                out.update(await asyncio.to_thread(_decode_payloads, rows))
            else:
                out.update(_decode_payloads(rows))
        return out


def _decode_payloads(rows: list) -> dict[int, dict]:
    return {i: json.loads(p) for i, p in rows}
