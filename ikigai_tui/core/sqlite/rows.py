"""Reading an agent's events for its replay (mixed into the SQLite store)."""

from __future__ import annotations

import asyncio
import json

from ikigai_tui.core.events import EventRow

ROW_BATCH = 5000


def _decode(rows: list) -> list[EventRow]:
    return [(i, k, json.loads(p)) for i, k, p in rows]


class AgentRows:
    """Mixed into the SQLite store: needs _db, _reading."""

    async def agent_rows(self, agent_id: str, upto: int | None = None) -> list[EventRow]:
        """One agent's events in log order, decoded; only ids below `upto` when given."""
        sql = "SELECT id, kind, payload FROM events WHERE agent_id = ?"
        params: tuple = (agent_id,)
        if upto is not None:
            sql += " AND id < ?"
            params = (agent_id, upto)
        out: list[EventRow] = []
        # Decoded in batches: the raw rows of a long log never all live at once next
        # to their decoded payloads (half the peak memory of opening 100,000 events);
        # a full batch in a worker thread (20 ms of JSON would hold the event loop).
        with self._reading():  # type: ignore[attr-defined]
            async with self._db.execute(sql + " ORDER BY id", params) as cursor:  # type: ignore[attr-defined]
                while rows := await cursor.fetchmany(ROW_BATCH):
                    many = len(rows) >= ROW_BATCH
                    out.extend(await asyncio.to_thread(_decode, rows) if many else _decode(rows))
        return out
