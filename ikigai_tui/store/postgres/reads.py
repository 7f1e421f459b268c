"""Reading the PostgreSQL log (mixed into PgStore, store.py): an agent's rows and
outline for its replay, payloads, pages, agents, counts, search, the integrity check."""

from __future__ import annotations

import json
from array import array
from collections.abc import Iterable, Sequence
from typing import Any

from ikigai_tui.core.events import CONTEXT_MESSAGE_KINDS, AgentRecord, Event, EventRow
from ikigai_tui.core.replay.rows import Rows
from ikigai_tui.store.postgres.search import ts_query, word_query

ROW_BATCH = 5000
PAYLOAD_BATCH = 5000
AGENT_COLUMNS = "id, parent_id, name, model, status, created_at, fork_event_id, budget"
EVENT_COLUMNS = "id, agent_id, kind, payload, created_at"


def event_of(row: Any) -> Event:
    return Event(row[0], row[1], row[2], json.loads(row[3]), row[4])


class LogReads:
    """Needs PgStore's _fetch, _value, _on_connection and tail."""

    _fetch: Any
    _value: Any
    _on_connection: Any
    tail: Any

    async def _each(self, take: Any, sql: str, *args: Any) -> None:
        """`take(rows)` for the rows of `sql`, ROW_BATCH at a time (a long log is never
        read all at once); the connection goes back to the pool however it ends."""
        async def read(con: Any) -> None:
            async with con.transaction(readonly=True):
                cursor = await con.cursor(sql, *args)
                while rows := await cursor.fetch(ROW_BATCH):
                    take(rows)

        await self._on_connection(read)

    async def agent_rows(self, agent_id: str, upto: int | None = None) -> list[EventRow]:
        out: list[EventRow] = []
        await self._each(lambda rows: out.extend((i, k, json.loads(p)) for i, k, p in rows),
                         "SELECT id, kind, payload FROM events WHERE agent_id = $1 AND id < $2 "
                         "ORDER BY id", agent_id, upto if upto is not None else 2**62)
        return out

    async def agent_outline(self, agent_id: str, upto: int | None = None) -> Sequence[EventRow]:
        out = Rows()
        await self._each(lambda rows: out.extend_encoded(rows, json.loads, CONTEXT_MESSAGE_KINDS),
                         "SELECT id, kind, COALESCE(outline, payload) FROM events "
                         "WHERE agent_id = $1 AND id < $2 ORDER BY id",
                         agent_id, upto if upto is not None else 2**62)
        return out

    async def payloads(self, ids: Sequence[int]) -> dict[int, dict]:
        out: dict[int, dict] = {}
        for start in range(0, len(ids), PAYLOAD_BATCH):
            part = list(ids[start:start + PAYLOAD_BATCH])
            rows = await self._fetch("SELECT id, payload FROM events WHERE id = ANY($1)", part)
            out.update({i: json.loads(p) for i, p in rows})
        return out

    async def events(self, agent_id: str | None = None, *, after: int = 0,
                     limit: int | None = None) -> list[Event]:
        if agent_id is None:
            return await self.tail(after, limit)
        rows = await self._fetch(f"SELECT {EVENT_COLUMNS} FROM events WHERE id > $1 AND "
                                 "agent_id = $2 ORDER BY id LIMIT $3", after, agent_id, limit)
        return [event_of(r) for r in rows]

    async def page(self, agent_id: str, kinds: Iterable[str], *, before: int | None = None,
                   after: int | None = None, limit: int = 100) -> list[Event]:
        wanted = list(kinds)
        if after is not None:
            rows = await self._fetch(
                f"SELECT {EVENT_COLUMNS} FROM events WHERE agent_id = $1 AND kind = ANY($2) "
                "AND id > $3 ORDER BY id LIMIT $4", agent_id, wanted, after, limit)
            return [event_of(r) for r in rows]
        rows = await self._fetch(
            f"SELECT {EVENT_COLUMNS} FROM events WHERE agent_id = $1 AND kind = ANY($2) "
            "AND id < $3 ORDER BY id DESC LIMIT $4", agent_id, wanted,
            before if before is not None else 2**62, limit)
        return [event_of(r) for r in rows][::-1]

    async def page_keys(self, agent_id: str, kinds: Iterable[str]) -> Sequence[int]:
        keys = array("q")
        await self._each(lambda rows: keys.extend(r[0] for r in rows),
                         "SELECT id FROM events WHERE agent_id = $1 AND kind = ANY($2) ORDER BY id",
                         agent_id, list(kinds))
        return keys

    async def agents(self) -> list[AgentRecord]:
        rows = await self._fetch(f"SELECT {AGENT_COLUMNS} FROM agents ORDER BY created_at, seq")
        return [AgentRecord(*r) for r in rows]

    async def unread_counts(self, upto: int | None = None) -> dict[str, int]:
        rows = await self._fetch(
            "SELECT agent_id, SUM(CASE kind WHEN 'mail' THEN 1 "
            "ELSE -jsonb_array_length(payload::jsonb -> 'ids') END) "
            "FROM events WHERE kind IN ('mail', 'mail_read') AND id <= $1 GROUP BY agent_id",
            upto if upto is not None else 2**62)
        return {agent_id: int(n) for agent_id, n in rows if n}

    async def count_events(self) -> int:
        return int(await self._value("SELECT COUNT(*) FROM events"))

    async def max_event_id(self) -> int:
        return int(await self._value("SELECT COALESCE(MAX(id), 0) FROM events"))

    async def search(self, query: str, ids: Iterable[str], limit: int = 50) -> list[Event]:
        tsquery = ts_query(query)
        if not tsquery:
            return []
        rows = await self._fetch(
            f"SELECT {EVENT_COLUMNS} FROM events WHERE search @@ to_tsquery('simple', $1) "
            "AND agent_id = ANY($2) ORDER BY ts_rank(search, to_tsquery('simple', $1)) DESC, "
            "id LIMIT $3", tsquery, list(ids), limit)
        return [event_of(r) for r in rows]

    async def search_keys(self, query: str, ids: Iterable[str],
                          limit: int = 5000) -> list[tuple[int, str]]:
        tsquery = ts_query(query)
        if not tsquery:
            return []
        rows = await self._fetch(
            "SELECT id, agent_id FROM events WHERE search @@ to_tsquery('simple', $1) "
            "AND agent_id = ANY($2) ORDER BY id DESC LIMIT $3", tsquery, list(ids), limit)
        return [(r[0], r[1]) for r in rows]

    async def word_hits(self, words: Sequence[str], low: int, high: int) -> dict[str, list[int]]:
        hits: dict[str, list[int]] = {}
        for word in dict.fromkeys(words):
            tsquery = word_query(word)
            rows = await self._fetch(
                "SELECT id FROM events WHERE search @@ to_tsquery('simple', $1) "
                "AND id BETWEEN $2 AND $3 ORDER BY id", tsquery, low, high) if tsquery else []
            hits[word] = [r[0] for r in rows]
        return hits

    async def integrity_problems(self, limit: int = 100) -> list[str]:
        """What `ikigai check` reports besides replaying every agent: the server keeps
        its pages sound; here, ids that are not the gapless run the feed relies on."""
        first, last, count = await self._fetch_row(
            "SELECT COALESCE(MIN(id), 1), COALESCE(MAX(id), 0), COUNT(*) FROM events")
        if count and (first != 1 or last != count):
            return [f"event ids run {first}..{last} but {count} events are stored"][:limit]
        return []

    async def _fetch_row(self, sql: str, *args: Any) -> Any:
        rows = await self._fetch(sql, *args)
        return rows[0]
