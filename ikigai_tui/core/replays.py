"""The agents' replayed contexts: loaded from the log on first use (ancestors up to each
fork, then the agent), then kept up to date with every committed event, in id order.

What is replayed are outlines (core/replay/bodies.py): each message without its text, which
stays in the log and is read on demand through `Bodies` (the session's `bodies`); so
an agent's memory grows by its messages' count, not by their text."""

from __future__ import annotations

import asyncio
import gc

from ikigai_tui.core.agents import AgentRuntime, AgentTree
from ikigai_tui.core.replay.bodies import Bodies, outline_row
from ikigai_tui.core.events import Event
from ikigai_tui.core.ports import EventLog
from ikigai_tui.core.replay.replayer import EMPTY, Replayer, Snapshot

THREAD_ROWS = 4_000  # below this a replay takes a few ms: not worth a thread


class Replays:
    def __init__(self, store: EventLog, tree: AgentTree, bodies: Bodies | None = None) -> None:
        self.store = store
        self.tree = tree
        self.bodies = bodies if bodies is not None else Bodies(store)
        self._loading: dict[str, list[Event]] = {}
        self._loaded: dict[str, asyncio.Future] = {}
        self._inherit: dict[str, Snapshot] = {}
        # What each child inherited at its fork: fixed forever once the fork is written.
        self._bases: dict[str, Snapshot] = {}

    async def get(self, agent_id: str) -> Replayer:
        """The agent's replayed state, loaded from the log on first use."""
        agent = self.tree[agent_id]
        if agent.replayer is not None:
            return agent.replayer
        if agent_id in self._loaded:  # another caller is loading it
            return await asyncio.shield(self._loaded[agent_id])
        # Events committed while the log is read are buffered, then applied if newer.
        self._loading[agent_id] = []
        done = self._loaded[agent_id] = asyncio.get_running_loop().create_future()
        try:
            replayer = await self._load(agent_id)
            last = replayer.history[-1][0] if replayer.history else 0
            for event in self._loading[agent_id]:
                if event.id > last:
                    replayer.apply(outline_row(event.row))
            agent.replayer = replayer
            agent.unread = len(replayer.unread)
            done.set_result(replayer)
        except BaseException as exc:
            done.set_exception(exc)
            done.exception()  # retrieved: waiters re-raise it, nobody else must
            raise
        finally:
            del self._loading[agent_id]
            del self._loaded[agent_id]
        return replayer

    def apply(self, event: Event, agent: AgentRuntime) -> None:
        """One committed event (of `agent`): buffered while its log is read, applied to
        its loaded context, or counted as mail."""
        if event.agent_id in self._loading:
            self._loading[event.agent_id].append(event)
        payload = event.payload
        if event.kind == "fork" and "child" in payload and agent.replayer is not None:
            # The child inherits the parent's context exactly as of this event.
            self._inherit[payload["child"]] = agent.replayer.snapshot(
                payload.get("mark_event"), payload.get("at_event"))
        if event.kind == "fork" and "parent" in payload and agent.replayer is None:
            base = self._inherit.pop(event.agent_id, None)
            if base is not None:
                self._bases[event.agent_id] = base
                agent.replayer = Replayer(base)
        if agent.replayer is not None:
            history = agent.replayer.history
            if not history or history[-1][0] < event.id:  # not read with its log
                row = event.row
                outlined = outline_row(row)
                if outlined is not row:  # a message: its body is likely wanted soon
                    self.bodies.put(event.id, event.payload)
                agent.replayer.apply(outlined)
                agent.unread = len(agent.replayer.unread)
        elif event.kind == "mail":
            agent.unread += 1
        elif event.kind == "mail_read":  # read by another process
            agent.unread = max(0, agent.unread - len(payload.get("ids", ())))

    async def _load(self, agent_id: str) -> Replayer:
        """Replay the ancestors up to each fork, then the agent itself."""
        # Decoding and replaying a long log makes millions of objects that all live on;
        # the cyclic collector would scan them over and over (a third of the time at 1M).
        paused = gc.isenabled()
        gc.disable()
        try:
            replayer = await self._load_lineage(agent_id)
            # What was just loaded lives as long as the session: out of the collector's
            # sight, so a later full collection does not walk it all (a 100 ms pause).
            gc.freeze()
            return replayer
        finally:
            if paused:
                gc.enable()

    async def _load_lineage(self, agent_id: str) -> Replayer:
        chain = self.tree.lineage(agent_id)
        base: Snapshot = EMPTY
        start = 0
        for i in range(len(chain) - 1, 0, -1):  # the deepest inheritance already known
            if chain[i].id in self._bases:
                base, start = self._bases[chain[i].id], i
                break
        for i, agent in enumerate(chain):
            if i < start:
                continue
            if i + 1 < len(chain):
                fork_at = chain[i + 1].fork_event_id
                rows = await self._rows_upto(agent, (fork_at or 0) + 1)
                fork_row = rows[-1] if rows and rows[-1][1] == "fork" else None
                replayer = await _replay(rows, base)
                fork = fork_row[2] if fork_row else {}
                base = self._bases[chain[i + 1].id] = replayer.snapshot(
                    fork.get("mark_event"), fork.get("at_event"))
            else:
                rows = await self.store.agent_outline(agent.id)
                return await _replay(rows, base)
        raise AssertionError("unreachable")

    async def _rows_upto(self, agent: AgentRuntime, upto: int) -> list:
        """The agent's events with ids below `upto`: from its loaded history when it has
        one (no second read and decode of a long log), else from the log."""
        if agent.replayer is None:
            return await self.store.agent_outline(agent.id, upto=upto)
        history = agent.replayer.history
        return history[:history.position(upto)]


async def _replay(rows: list, base: Snapshot) -> Replayer:
    """One pass over a whole log, in a worker thread when it is long: the event loop
    (keys, streams, the screen) keeps its turn every switch interval instead of waiting
    a second for 400,000 events. The new replayer is shared with nobody until it returns;
    events committed meanwhile are buffered by `Replays.get` and applied after."""
    if len(rows) < THREAD_ROWS:
        return Replayer.from_rows(rows, base)
    return await asyncio.to_thread(Replayer.from_rows, rows, base)
