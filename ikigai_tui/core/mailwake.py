"""Mail that acts (issue 27): agents on "wake" read their mail and take a turn by
themselves; a child forked with --report mails its final reply home; /wait waits for
agents to go idle. The rules are core/mailbox.py's; this is their runtime.

It listens to the session's notices. A mail committed (by this process or, through the
feed, by another) to an agent on "wake" that is idle here wakes it: this process takes
the agent's lease first (the process holding it runs its turns; one that cannot take it
leaves the wake to that one, which wakes the agent when its turn ends), runs exactly
/check-mail (source "wake") and starts the turn. Mail arriving during a turn waits for
its end, then wakes the agent once for all of it. A dead agent never wakes; after
`wake_limit` woken turns in a row without a message typed to it, an agent does not wake
again (one line says so) until someone writes to it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Protocol

from ikigai_tui.core.events import WriteBatch
from ikigai_tui.core.mailbox import (
    WAKE, MailSettings, Mode, from_fork_or_mail, last_reply, last_turn, mail_mode,
    reports_home, woken_in_a_row,
)
from ikigai_tui.core.notices import ErrorNotice, EventsCommitted, Notice, TurnFinished

if TYPE_CHECKING:
    from ikigai_tui.core.agents import AgentRuntime, AgentTree
    from ikigai_tui.core.replay.bodies import Bodies
    from ikigai_tui.core.replay.replayer import Replayer

__all__ = ["MailSettings", "MailWake"]

POLL = 0.25  # seconds between /wait's looks at agents working in another process


class WakeHost(Protocol):
    """What the mail runtime uses of the session."""

    tree: AgentTree
    bodies: Bodies
    store: Any  # catch_up(), when the store has it: what other processes committed
    leases: Any  # core/leases.py's LeaseKeeper

    def subscribe(self, listener: Callable[[Notice], None]) -> Callable[[], None]: ...
    def notify(self, notice: Notice) -> None: ...
    async def replayer(self, agent_id: str) -> Replayer: ...
    async def command(self, agent_id: str, text: str, source: str = ...) -> Any: ...
    def start_if_pending(self, agent_id: str) -> asyncio.Task | None: ...
    async def commit(self, batch: WriteBatch) -> list: ...


class MailWake:
    def __init__(self, host: WakeHost, settings: Callable[[], MailSettings]) -> None:
        self.host = host
        self.settings = settings
        self._tasks: dict[str, asyncio.Task] = {}  # agent -> its wake in flight
        self._ends: dict[str, asyncio.Task] = {}  # agent -> its turn's end: report, then wake
        self._limited: set[str] = set()  # agents told they reached the limit
        self._waits: dict[str, set[asyncio.Task]] = {}  # agent -> the tasks of its /wait
        host.subscribe(self._on_notice)

    # -- what the session asks -------------------------------------------------

    def pending(self) -> list[asyncio.Task]:
        """The wakes and reports in flight: `ikigai run` waits for them too."""
        return [t for t in (*self._tasks.values(), *self._ends.values()) if not t.done()]

    async def close(self) -> None:
        """The program ends: no wake or report starts any more."""
        tasks = self.pending()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def waking(self, agent_id: str) -> bool:
        task = self._tasks.get(agent_id)
        return task is not None and not task.done()

    def _ending(self, agent_id: str) -> asyncio.Task | None:
        """The end of its turn (its report) still on its way, if it is."""
        task = self._ends.get(agent_id)
        return task if task is not None and not task.done() else None

    async def mode(self, agent: AgentRuntime) -> Mode:
        replayer = await self.host.replayer(agent.id)
        return mail_mode(replayer, agent.parent_id is None, self.settings())

    # -- notices ---------------------------------------------------------------

    def _on_notice(self, notice: Notice) -> None:
        if getattr(self.host.store, "readonly", False):  # ikigai log, context: they only read
            return
        if isinstance(notice, EventsCommitted):
            for agent_id in {e.agent_id for e in notice.events if e.kind == "mail"}:
                self._schedule(agent_id, self._wake(agent_id))
        elif isinstance(notice, TurnFinished) and notice.agent_id in self.host.tree:
            self._ends[notice.agent_id] = asyncio.get_running_loop().create_task(
                self._turn_ended(notice))

    def poke(self, agent_id: str) -> None:
        """Wake the agent if mail waits for it and its mode says so (/mail wake)."""
        self._schedule(agent_id, self._wake(agent_id))

    def _schedule(self, agent_id: str, work) -> None:
        """One wake per agent at a time: a wake already on its way reads all the mail."""
        if agent_id not in self.host.tree or self.waking(agent_id):
            work.close()
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop: a commit outside of one (tests' set-up)
            work.close()
            return
        self._tasks[agent_id] = loop.create_task(work)

    async def _turn_ended(self, notice: TurnFinished) -> None:
        agent = self.host.tree[notice.agent_id]
        await _after(agent.task)
        try:
            await self._report(agent, notice)
        except Exception as exc:  # a full disk, say: the parent is not told
            self.host.notify(ErrorNotice(agent.id, f"its report could not be mailed: {exc}"))
        finally:  # mail that came during the turn (or before, unread) wakes it now
            self._schedule(agent.id, self._wake(agent.id))

    # -- wake ------------------------------------------------------------------

    async def _wake(self, agent_id: str) -> None:
        host = self.host
        agent = host.tree[agent_id]
        await _after(agent.task)  # a turn running here: it wakes the agent at its end
        if agent.dead or agent.busy:
            return
        replayer = await host.replayer(agent_id)
        if not replayer.unread or (await self.mode(agent)).mode != "wake":
            return
        limit = self.settings().wake_limit
        if woken_in_a_row(replayer, limit) >= limit:
            if agent_id not in self._limited:
                self._limited.add(agent_id)
                host.notify(ErrorNotice(agent_id, (
                    f"mail does not wake {host.tree.label(agent_id)} any more: {limit} turns "
                    f"woken by mail in a row (wake_limit) without a message from you. Its "
                    "mail waits: /check-mail reads it, a message lets mail wake it again")))
            return
        if await host.leases.take(agent_id) is not None:
            return  # another process runs its turns: that one wakes it
        started = None
        try:
            if (catch_up := getattr(host.store, "catch_up", None)) is not None:
                await catch_up()  # mail another process's wake read already
            if agent.dead or agent.busy or not replayer.unread:
                return
            self._limited.discard(agent_id)
            await host.command(agent_id, "/check-mail", source=WAKE)
            started = host.start_if_pending(agent_id)
        except Exception as exc:  # a full disk, a full context: the mail stays unread
            host.notify(ErrorNotice(agent_id, f"mail could not wake it: {exc}"))
        finally:
            if started is None:
                await host.leases.release(agent_id)

    # -- reports ---------------------------------------------------------------

    async def _report(self, agent: AgentRuntime, notice: TurnFinished) -> None:
        """A --report child's turn that answered its fork prompt or mail: its final reply
        (or its failure) goes to its parent as mail marked a report."""
        host = self.host
        parent = host.tree.agents.get(agent.parent_id or "")
        if agent.dead or parent is None or parent.dead:
            return
        replayer = await host.replayer(agent.id)
        end = last_turn(replayer)
        if not reports_home(replayer) or end is None or not from_fork_or_mail(replayer, end.answered):
            return
        if not notice.ok or end.stopped or end.reply is None:
            ok = False
            text = notice.error or "its turn was stopped before it replied"
        else:
            ok = True
            text = str((await host.bodies.get([end.reply])).get(end.reply, {}).get("content", ""))
        batch = WriteBatch()
        batch.add(parent.id, "mail", {"from": agent.id, "from_label": host.tree.label(agent.id),
                                      "text": text, "report": True, "ok": ok})
        await host.commit(batch)

    # -- /wait -----------------------------------------------------------------

    def stop_waits(self, agent_ids: Iterable[str]) -> list[asyncio.Task]:
        """Cancel the /wait of these agents (Esc, /kill); returns the tasks cancelled."""
        tasks = [t for i in agent_ids for t in self._waits.get(i, ()) if not t.done()]
        for task in tasks:
            task.cancel()
        return tasks

    async def wait(self, waiter: str, agent_ids: Iterable[str], timeout: float | None,
                   elsewhere: Callable[[str], Any] | None = None) -> list[str]:
        """`waiter` waits until every agent is idle or dead (here and in every other
        process); returns those still working when `timeout` seconds ran out ([] when
        none). `stop_waits([waiter])` cancels it."""
        task = asyncio.current_task()
        waits = self._waits.setdefault(waiter, set())
        waits.add(task)
        try:
            return await self._wait(list(agent_ids), timeout, elsewhere)
        finally:
            waits.discard(task)

    async def _wait(self, ids: list[str], timeout: float | None,
                    elsewhere: Callable[[str], Any] | None) -> list[str]:
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while True:
            working = [i for i in ids if await self._working(i, elsewhere)]
            if not working:
                return []
            left = None if deadline is None else deadline - loop.time()
            if left is not None and left <= 0:
                return working
            here = [t for i in working if (t := self._here(i)) is not None]
            step = POLL if left is None else min(POLL, left)
            if here:
                await asyncio.wait(here, timeout=step)
            else:
                await asyncio.sleep(step)

    def _here(self, agent_id: str) -> asyncio.Task | None:
        agent = self.host.tree[agent_id]
        if agent.busy:
            return agent.task
        return self._tasks.get(agent_id) if self.waking(agent_id) else self._ending(agent_id)

    async def _working(self, agent_id: str, elsewhere: Callable[[str], Any] | None) -> bool:
        agent = self.host.tree[agent_id]
        if agent.dead:
            return False
        if agent.busy or self.waking(agent_id) or self._ending(agent_id) is not None:
            return True
        return elsewhere is not None and await elsewhere(agent_id) is not None

    async def reports_from(self, agent_id: str, senders: set[str]) -> list[int]:
        """The ids of the agent's unread reports from `senders`."""
        unread = (await self.host.replayer(agent_id)).unread
        return [k for k, m in unread.items() if m.get("report") and m.get("from") in senders]

    async def reply_of(self, agent_id: str) -> tuple[int, str] | None:
        """The agent's latest reply (its id and text), or None."""
        key = last_reply(await self.host.replayer(agent_id))
        if key is None:
            return None
        payload = (await self.host.bodies.get([key])).get(key, {})
        return key, str(payload.get("content", ""))


async def _after(task: asyncio.Task | None) -> None:
    """Wait for a turn's task to end (not when it is the caller's own)."""
    if task is not None and not task.done() and task is not asyncio.current_task():
        await asyncio.wait([task])
