"""Leases on agents (the SmallState port): which process runs an agent's turn.

One row per leased agent: the holder's pid and host, when it took the lease, when it
last renewed it. A lease is kept by a live holder; it is taken over when its holder is
gone: on this host, no process has its pid; anywhere, it was not renewed for STALE
seconds (a holder renews every RENEW seconds while its turn runs; the policy, who
keeps a lease, is core/leases.py's: any store applies it).
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from ikigai_tui.core.leases import keeps
from ikigai_tui.core.ports import Holder

class Leases:
    """Mixed into the SQLite store: needs _db, _lock (one transaction at a time on the
    connection, shared with the writer), _writing, _rollback."""

    async def acquire_lease(self, agent_id: str, pid: int, host: str,
                            gone: list[Holder] | None = None) -> Holder | None:
        db = self._db  # type: ignore[attr-defined]
        now = time.time()
        async with self._lock:  # type: ignore[attr-defined]
            return await self._acquire(db, agent_id, pid, host, now, gone)

    async def _acquire(self, db, agent_id: str, pid: int, host: str, now: float,
                       gone: list[Holder] | None) -> Holder | None:
        with self._writing():  # type: ignore[attr-defined]
            await db.execute("BEGIN IMMEDIATE")
            try:
                rows = await db.execute_fetchall(
                    "SELECT pid, host, started_at, renewed_at FROM leases WHERE agent_id = ?",
                    (agent_id,))
                holder = Holder(*list(rows)[0]) if rows else None
                other = holder is not None and (holder.pid, holder.host) != (pid, host)
                if other and keeps(holder, host, now):
                    await db.execute("ROLLBACK")
                    return holder
                await db.execute(
                    "INSERT INTO leases (agent_id, pid, host, started_at, renewed_at) "
                    "VALUES (?, ?, ?, ?, ?) ON CONFLICT(agent_id) DO UPDATE SET "
                    "pid = excluded.pid, host = excluded.host, "
                    "started_at = excluded.started_at, renewed_at = excluded.renewed_at",
                    (agent_id, pid, host, now, now))
                await db.execute("COMMIT")
            except BaseException:
                await self._rollback()  # type: ignore[attr-defined]
                raise
        if other and gone is not None:
            gone.append(holder)
        return None

    async def release_lease(self, agent_id: str, pid: int, host: str) -> None:
        async with self._lock:  # type: ignore[attr-defined]
            with self._writing():  # type: ignore[attr-defined]
                await self._db.execute(  # type: ignore[attr-defined]
                    "DELETE FROM leases WHERE agent_id = ? AND pid = ? AND host = ?",
                    (agent_id, pid, host))

    async def renew_leases(self, agent_ids: Iterable[str], pid: int, host: str) -> None:
        ids = list(agent_ids)
        if not ids:
            return
        marks = ",".join("?" for _ in ids)
        async with self._lock:  # type: ignore[attr-defined]
            with self._writing():  # type: ignore[attr-defined]
                await self._db.execute(  # type: ignore[attr-defined]
                    f"UPDATE leases SET renewed_at = ? WHERE pid = ? AND host = ? "
                    f"AND agent_id IN ({marks})", (time.time(), pid, host, *ids))

    async def lease_holder(self, agent_id: str) -> Holder | None:
        rows = await self._fetch(  # type: ignore[attr-defined]
            "SELECT pid, host, started_at, renewed_at FROM leases WHERE agent_id = ?",
            (agent_id,))
        return Holder(*rows[0]) if rows else None
