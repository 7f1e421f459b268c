"""Leases on agents (the SmallState port): which process runs an agent's turn.

One row per leased agent: the holder's pid and host, when it took the lease, when it
last renewed it. A lease is kept by a live holder; it is taken over when its holder is
gone: on this host, no process has its pid; anywhere, it was not renewed for STALE
seconds (a holder renews every RENEW seconds while its turn runs, see core/leases.py).
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterable

from ikigai_tui.core.ports import Holder

STALE = 60.0


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid runs. A zombie (killed, not yet reaped by its
    parent) does not: it answers os.kill(pid, 0) but will never write again."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive, unless a zombie
        pass
    except OSError:
        return False
    return not _zombie(pid)


def _zombie(pid: int) -> bool:
    """Whether the process has ended: its state is 'Z' (or it is gone), from /proc where
    there is one, else from ps(1)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            # "pid (comm) state ...": comm may hold spaces and parentheses.
            return stat.read().rpartition(b")")[2].split()[:1] == [b"Z"]
    except FileNotFoundError:
        if os.path.isdir("/proc/self"):
            return True  # gone between the kill and the read: not running either
    except OSError:
        return False
    try:
        done = subprocess.run(["ps", "-o", "stat=", "-p", str(pid)], capture_output=True,
                              text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return False  # cannot tell: alive, as before
    return done.stdout.strip().startswith("Z")


def keeps(holder: Holder, host: str, now: float) -> bool:
    """Whether the holder still keeps its lease, seen from a process on `host`."""
    if now - holder.renewed_at > STALE:
        return False
    return holder.host != host or pid_alive(holder.pid)


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
