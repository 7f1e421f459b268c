"""This process's leases on the agents whose turns it runs (the store keeps them:
core/ports.py's SmallState): taken before a turn's first write, renewed while it runs,
released when it ends, so that two processes never run a turn of one agent at once; and
the policy every store applies: a lease is kept by a live holder, and taken over when its
holder is gone (on this host, no process has its pid; anywhere, no renewal for STALE
seconds)."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import subprocess
import time
from collections.abc import Awaitable, Callable

from ikigai_tui.core.ports import Holder, StoreError

log = logging.getLogger(__name__)

RENEW = 15.0  # seconds; well inside STALE

STALE = 60.0  # seconds without a renewal: the holder is gone, wherever it ran


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



class LeaseKeeper:
    def __init__(self, store,
                 on_gone: Callable[[str, Holder], Awaitable[None]] | None = None) -> None:
        self.store = store
        # Called when a take finds the lease of a process that ended without releasing
        # it (killed, crashed): the turn it ran died with it.
        self.on_gone = on_gone
        self.pid = os.getpid()
        self.host = socket.gethostname()
        self.held: set[str] = set()
        self._renewer: asyncio.Task | None = None
        self._releasing: dict[str, asyncio.Task] = {}

    async def take(self, agent_id: str) -> Holder | None:
        """None when this process holds the agent's lease now; else who keeps it."""
        if agent_id in self.held:
            return None
        if (pending := self._releasing.get(agent_id)) is not None:
            await asyncio.shield(pending)  # never let a late release undo this take
        gone: list[Holder] = []
        holder = await self.store.acquire_lease(agent_id, self.pid, self.host, gone)
        if holder is None:
            self.held.add(agent_id)
            if self._renewer is None or self._renewer.done():
                self._renewer = asyncio.get_running_loop().create_task(self._renew())
            if gone and self.on_gone is not None:
                try:
                    await self.on_gone(agent_id, gone[0])
                except BaseException:
                    await self.release(agent_id)
                    raise
        return holder

    async def elsewhere(self, agent_id: str) -> Holder | None:
        """The other process running a turn of this agent now, if any (writes nothing)."""
        if agent_id in self.held:
            return None
        holder = await self.store.lease_holder(agent_id)
        if holder is None or (holder.pid, holder.host) == (self.pid, self.host):
            return None
        return holder if keeps(holder, self.host, time.time()) else None

    async def release(self, agent_id: str) -> None:
        if agent_id in self.held:
            self.held.discard(agent_id)
            await self._drop(agent_id)

    async def _drop(self, agent_id: str) -> None:
        try:
            await self.store.release_lease(agent_id, self.pid, self.host)
        except StoreError as exc:  # a full disk: the write that hit it said so already
            log.debug("releasing the lease on %s failed: %s", agent_id, exc)
        except Exception as exc:  # a closed store: the lease goes stale
            log.warning("releasing the lease on %s failed: %s", agent_id, exc)

    def release_soon(self, agent_id: str) -> None:
        """Release without holding up the caller (a turn ends at once; the write follows,
        and a take of the same agent waits for it)."""
        if agent_id not in self.held:
            return
        self.held.discard(agent_id)
        task = asyncio.get_running_loop().create_task(self._drop(agent_id))
        self._releasing[agent_id] = task
        task.add_done_callback(lambda _: self._releasing.pop(agent_id, None)
                               if self._releasing.get(agent_id) is task else None)

    async def _renew(self) -> None:
        while self.held:
            await asyncio.sleep(RENEW)
            try:
                await self.store.renew_leases(list(self.held), self.pid, self.host)
            except StoreError as exc:
                log.warning("renewing leases failed: %s", exc)

    async def close(self) -> None:
        if self._releasing:
            await asyncio.gather(*self._releasing.values(), return_exceptions=True)
        for agent_id in list(self.held):
            await self.release(agent_id)
        if self._renewer is not None:
            self._renewer.cancel()


def busy_message(label: str, holder: Holder) -> str:
    return (f"agent {label} is busy in another ikigai process "
            f"(pid {holder.pid} on {holder.host})")
