"""The PostgreSQL log's small state (mixed into PgStore, store.py): token factors, usage
sums, the kept blocks of token counts and message vectors, counts of texts, and the
leases on agents (the SmallState, TokenCounts and MatchIndex ports' tables)."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from ikigai_tui.core.leases import keeps
from ikigai_tui.core.ports import Holder, TokenBlock, VectorBlock
from ikigai_tui.store.postgres.connect import LOCK_CLASS, translated


def _checked(block: TokenBlock | VectorBlock, problem: str) -> bool:
    """Whether a block has messages to keep; ValueError when its arrays do not agree."""
    if not block.ids:
        return False
    if len(block.ids) % 8 or len(block.tokens) != len(block.ids):
        raise ValueError(problem)
    return True


class SmallStateRows:
    """Needs PgStore's _fetch, _execute, _on_connection, _check_writable, _pool, path,
    schema."""

    path: str
    schema: str
    _pool: Any
    _fetch: Any
    _execute: Any
    _on_connection: Any
    _check_writable: Any

    # -- small state ------------------------------------------------------------

    async def token_factors(self) -> dict[str, tuple[float, int]]:
        rows = await self._fetch("SELECT model, factor, samples FROM token_factors")
        return {m: (float(f), int(s)) for m, f, s in rows}

    async def usage_sums(self, tier: int) -> list[tuple[str, str, bool, int, int]]:
        rows = await self._fetch(
            "SELECT agent_id, COALESCE(p ->> 'model', '') AS model, "
            "COALESCE((p ->> 'input_tokens')::bigint, 0) > $1 AS above, "
            "SUM(COALESCE((p ->> 'input_tokens')::bigint, 0)), "
            "SUM(COALESCE((p ->> 'output_tokens')::bigint, 0)) "
            "FROM (SELECT agent_id, payload::jsonb AS p FROM events WHERE kind = 'usage') u "
            "GROUP BY 1, 2, 3", tier)
        return [(a, m, bool(above), int(i), int(o)) for a, m, above, i, o in rows]

    async def _blocks(self, table: str, key: str, value: str, columns: str, low: int,
                      high: int) -> list:
        return await self._fetch(f"SELECT {columns} FROM {table} WHERE {key} = $1 AND "
                                 "low <= $2 AND high >= $3 ORDER BY seq", value, high, low)

    async def _save_block(self, table: str, key: str, value: str, ids: bytes,
                          values: dict[str, bytes]) -> None:
        names = ", ".join(values)
        marks = ", ".join(f"${n}" for n in range(5, 5 + len(values)))
        low = int.from_bytes(ids[:8], "little", signed=True)
        high = int.from_bytes(ids[-8:], "little", signed=True)
        await self._execute(f"INSERT INTO {table} ({key}, low, high, ids, {names}) "
                            f"VALUES ($1, $2, $3, $4, {marks})", value, low, high, ids,
                            *values.values())

    async def message_vectors(self, model: str, low: int, high: int) -> list[VectorBlock]:
        rows = await self._blocks("message_vectors", "model", model, "ids, tokens, vectors",
                                  low, high)
        return [VectorBlock(*r) for r in rows]

    async def save_message_vectors(self, model: str, block: VectorBlock) -> None:
        if not _checked(block, "a vector block needs one int64 id and token count per message"):
            return
        await self._save_block("message_vectors", "model", model, block.ids,
                               {"tokens": block.tokens, "vectors": block.vectors})

    async def token_blocks(self, encoding: str, low: int, high: int) -> list[TokenBlock]:
        rows = await self._blocks("message_tokens", "encoding", encoding, "ids, tokens",
                                  low, high)
        return [TokenBlock(*r) for r in rows]

    async def save_token_block(self, encoding: str, block: TokenBlock) -> None:
        if not _checked(block, "a token block needs one int64 id and one float64 count per message"):
            return
        await self._save_block("message_tokens", "encoding", encoding, block.ids,
                               {"tokens": block.tokens})

    async def text_tokens(self, encoding: str, digests: Iterable[str]) -> dict[str, float]:
        wanted = list(dict.fromkeys(digests))
        if not wanted:
            return {}
        rows = await self._fetch("SELECT digest, tokens FROM text_tokens WHERE encoding = $1 "
                                 "AND digest = ANY($2)", encoding, wanted)
        return {d: float(t) for d, t in rows}

    async def save_text_tokens(self, encoding: str, counts: dict[str, float]) -> None:
        if not counts:
            return
        self._check_writable()
        with translated(self.path):
            async with self._pool.acquire() as con:
                await con.executemany(
                    "INSERT INTO text_tokens (encoding, digest, tokens) VALUES ($1, $2, $3) "
                    "ON CONFLICT DO NOTHING", [(encoding, d, t) for d, t in counts.items()])

    # -- leases ------------------------------------------------------------------

    async def acquire_lease(self, agent_id: str, pid: int, host: str,
                            gone: list[Holder] | None = None) -> Holder | None:
        self._check_writable()
        now = time.time()

        async def take(con: Any) -> tuple[Holder | None, bool]:
            async with con.transaction():
                await con.execute("SELECT pg_advisory_xact_lock($1, hashtext($2))",
                                  LOCK_CLASS + 1, f"{self.schema}/{agent_id}")
                row = await con.fetchrow("SELECT pid, host, started_at, renewed_at "
                                         "FROM leases WHERE agent_id = $1", agent_id)
                holder = Holder(*row) if row else None
                other = holder is not None and (holder.pid, holder.host) != (pid, host)
                if other and keeps(holder, host, now):
                    return holder, True
                await con.execute(
                    "INSERT INTO leases (agent_id, pid, host, started_at, renewed_at) "
                    "VALUES ($1, $2, $3, $4, $4) ON CONFLICT (agent_id) DO UPDATE SET "
                    "pid = excluded.pid, host = excluded.host, "
                    "started_at = excluded.started_at, renewed_at = excluded.renewed_at",
                    agent_id, pid, host, now)
                return (holder if other else None), False

        holder, kept = await self._on_connection(take)
        if kept:
            return holder
        other = holder is not None
        if other and gone is not None:
            gone.append(holder)
        return None

    async def release_lease(self, agent_id: str, pid: int, host: str) -> None:
        await self._execute("DELETE FROM leases WHERE agent_id = $1 AND pid = $2 AND host = $3",
                            agent_id, pid, host)

    async def renew_leases(self, agent_ids: Iterable[str], pid: int, host: str) -> None:
        ids = list(agent_ids)
        if ids:
            await self._execute("UPDATE leases SET renewed_at = $1 WHERE pid = $2 AND host = $3 "
                                "AND agent_id = ANY($4)", time.time(), pid, host, ids)

    async def lease_holder(self, agent_id: str) -> Holder | None:
        rows = await self._fetch("SELECT pid, host, started_at, renewed_at FROM leases "
                                 "WHERE agent_id = $1", agent_id)
        return Holder(*rows[0]) if rows else None
