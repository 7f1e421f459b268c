"""The runtime: agents, their replayed contexts, commands, turns, notifications.

Every committed event reaches the agents' replayers through the store's commit hook,
in id order, so an agent's in-memory context is always the replay of what is on disk.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING

from ikigai_tui.core.agents import AgentRuntime, AgentTree
from ikigai_tui.core.leases import LeaseKeeper, busy_message
from ikigai_tui.core.mailwake import MailWake
from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.commands.parse import CommandResult, ParsedCommand
from ikigai_tui.core.events import AgentRecord, Event, WriteBatch
from ikigai_tui.core.models import ModelPolicy
from ikigai_tui.core.notices import (
    AgentChanged, ErrorNotice, EventsCommitted, Listener, Notice, Notices,
)
from ikigai_tui.core.ports import ConflictError, Holder, Persistence, StoreError
from ikigai_tui.core.provider import ProviderFactory
from ikigai_tui.core.replay.replayer import Replayer
from ikigai_tui.core.replays import Replays
from ikigai_tui.core.session_services import SessionServices
from ikigai_tui.core.session_settings import SessionSettings
from ikigai_tui.core.session_tools import SessionTools
from ikigai_tui.core.tokens.window import CONTEXT_FULL, ContextMeter, Window

if TYPE_CHECKING:  # loaded at the first command or plan (after the full screen's first frame)
    from ikigai_tui.core.commands.bus import Pending
    from ikigai_tui.core.context import Plan
    from ikigai_tui.core.matching.embedder import Embedder
    from ikigai_tui.core.commands.proposals import Reviewer, Verdict


class Session(SessionServices, SessionTools):
    def __init__(self, store: Persistence, providers: ProviderFactory,
                 settings: SessionSettings, new_id: Callable[[], str] | None = None) -> None:
        self.store = store
        self._new_id = new_id  # agent ids (None: random); tests give theirs, run after run
        self.providers = providers
        self.models = ModelPolicy(providers)  # which model, its limits, its key
        self.settings = settings
        self.tree = AgentTree()
        self.notices = Notices()  # who is told: the front ends subscribe
        self.replays = Replays(store, self.tree)
        self.bodies = self.replays.bodies  # message text on demand (core/replay/bodies.py)
        self.factors: dict[str, tuple[float, int]] = {}  # model -> (factor, samples)
        self.embedder: Embedder | None = None  # the local matcher's (None: the default)
        store.add_commit_hook(self._on_commit, with_origin=True)
        # One process at a time runs an agent's turn.
        self.leases = LeaseKeeper(store, on_gone=self._dead_turn)
        self.mailwake = MailWake(self, lambda: self.settings.mail)  # wakes, reports, /wait

    # -- opening ---------------------------------------------------------------

    @classmethod
    async def open(cls, store: Persistence, providers: ProviderFactory, settings: SessionSettings,
                   *, create_root: bool = True, new_id: Callable[[], str] | None = None) -> Session:
        session = cls(store, providers, settings, new_id)
        # Other processes' events reach _on_commit from here on: those after `seen`.
        seen = await store.start_feed()
        for rec in await store.agents():
            session.tree.add(AgentRuntime.from_record(rec))
        session.factors.update(await store.token_factors())  # the planner holds this dict
        for agent_id, count in (await store.unread_counts(upto=seen)).items():
            if agent_id in session.tree:
                session.tree[agent_id].unread = count
        if session.tree.root is None and create_root:
            try:
                await session._create_root()
            except ConflictError:
                # Another process created the root of this new database first: use it.
                await session._add_new_agents()
                if session.tree.root is None:
                    raise
        return session

    async def _create_root(self) -> None:
        batch = WriteBatch()
        root = AgentRecord(self.new_id(), None, "root", self.settings.model, "idle",
                           time.time(), None, self.settings.budget)
        batch.new_agents.append(root)
        if self.settings.system_prompt:
            batch.add(root.id, "system", {"content": self.settings.system_prompt})
        await self.commit(batch)

    def new_id(self) -> str:
        """A new agent id: random, or the one `new_id` (given at the start) makes."""
        return self._new_id() if self._new_id is not None else uuid.uuid4().hex

    async def close(self) -> None:
        await self.cancel_turns([a.id for a in self.tree if a.task is not None])
        await self.mailwake.close()
        if self.tool_servers is not None:  # the MCP servers stop with the program
            await self.tool_servers.close()
        await self.leases.close()

    # -- state -----------------------------------------------------------------

    def notify(self, notice: Notice) -> None:
        self.notices.notify(notice)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Tell `listener` every notice from now on; returns what unsubscribes it."""
        return self.notices.subscribe(listener)

    def unsubscribe(self, listener: Listener) -> None:
        self.notices.unsubscribe(listener)

    @property
    def listeners(self) -> list[Listener]:
        """Who is told now, in order (Notices.listeners)."""
        return self.notices.listeners

    async def commit(self, batch: WriteBatch) -> list[Event]:
        return await self.store.write(batch)

    async def messages(self, agent_id: str) -> list[tuple[int, str, dict]]:
        return await self.bodies.messages(await self.replayer(agent_id))  # with the text

    async def replayer(self, agent_id: str) -> Replayer:
        """The agent's replayed state, loaded from the log on first use."""
        return await self.replays.get(agent_id)

    def _on_commit(self, events: list[Event], agents: list[AgentRecord], updates: list,
                   foreign: bool = False) -> None:
        """Every committed event, this process's or (foreign) another's, in id order, once."""
        for rec in agents:
            if rec.id not in self.tree:
                self.tree.add(AgentRuntime.from_record(rec))
        for agent_id, column, value in updates:
            if agent_id in self.tree:
                self.tree[agent_id].apply_update(column, value)
                if foreign and column == "status" and value == "dead":
                    self._end_killed_turn(agent_id)
        for event in events:
            agent = self.tree.agents.get(event.agent_id)
            if agent is not None:  # always: the feed delivers an event's agent with it
                self.replays.apply(event, agent)
        if events:
            self.notify(EventsCommitted(events, foreign))
        for agent_id in {e.agent_id for e in events} | {a.id for a in agents}:
            self.notify(AgentChanged(agent_id))

    def _end_killed_turn(self, agent_id: str) -> None:
        """Another process's /kill (now committed) ends this process's turn of the agent,
        as a local /kill does: what the reply had received is kept, flagged interrupted.
        Cancelled, not awaited: the feed is delivering (the partial reply's commit waits
        for that delivery to end)."""
        task = self.tree[agent_id].task
        if task is not None and not task.done():
            task.cancel()

    def budget_of(self, agent: AgentRuntime) -> int:
        """What /budget set; else the root follows the configured budget and a child
        keeps what it inherited at fork."""
        if agent.replayer is not None and agent.replayer.budget is not None:
            return agent.replayer.budget
        if agent.parent_id is None:
            return self.settings.budget
        return agent.budget if agent.budget is not None else self.settings.budget

    def model_of(self, agent: AgentRuntime) -> str:
        return self.models.model_of(agent)

    async def plan(self, agent_id: str, *, messages: bool = False) -> Plan:
        """What the agent's next request holds: window, tokens, state (and messages)."""
        return await self.contexts.plan(agent_id, messages=messages)

    def meter(self, agent: AgentRuntime) -> ContextMeter:
        return self.contexts.meter(agent)

    async def measure(self, agent_id: str) -> Window:
        """Tokens, budget, window and usage state of the agent's next request."""
        return (await self.contexts.plan(agent_id)).window

    def learn(self, model: str, reported: int, raw_estimate: float) -> tuple[float, int] | None:
        return self.contexts.learn(model, reported, raw_estimate)

    def check_model(self, model: str) -> str:
        """The full name of a usable model (an alias or a bare name resolved); raises
        CommandError, in one line, for a name that cannot be used."""
        return self.models.check(model)

    def key_warning(self, model: str) -> str | None:
        """A line warning that messages to `model` will fail (its key is not set)."""
        return self.models.key_warning(model)

    # -- input -----------------------------------------------------------------

    async def command(self, agent_id: str, text: str, source: str = "human",
                      review: Reviewer | None = None) -> CommandResult:
        """Run a slash command. Raises CommandError; on error nothing is written. A command
        that proposes (/forget, /remember) is answered by `review` (default: accept all)."""
        return await self.commands.run(agent_id, text, source, review)

    async def propose(self, agent_id: str, text: str | ParsedCommand,
                      source: str = "human") -> CommandResult | Pending:
        """Run a command (its text, or parsed) up to its review: its result, or a Pending
        proposal for `answer`."""
        return await self.commands.propose(agent_id, text, source)

    async def answer(self, pending: Pending, verdict: Verdict,
                     refused: tuple[str, str] | None = None) -> CommandResult:
        """Apply exactly what the reviewer accepted, or write only the command record
        (`refused`: who refused a change the LLM asked for, and the line saying so)."""
        return await self.commands.answer(pending, verdict, refused)

    async def _busy_elsewhere(self, agent_id: str) -> None:
        """A context change refused while another process runs this agent's turn."""
        if (holder := await self.leases.elsewhere(agent_id)) is not None:
            raise CommandError(busy_message(self.tree.label(agent_id), holder)
                               + "; try again when its turn ends")

    async def _commit_command(self, batch: WriteBatch) -> list[Event]:
        try:
            return await self.commit(batch)
        except ConflictError as exc:
            # Another process wrote first (an agent of the same name, say): nothing of
            # this command was written; learn what it created, and say so in one line.
            await self._add_new_agents()
            raise CommandError(_conflict(batch, exc)) from None

    async def _add_new_agents(self) -> None:
        for rec in await self.store.agents():
            if rec.id not in self.tree:
                self.tree.add(AgentRuntime.from_record(rec))

    def _dead_error(self, agent_id: str) -> CommandError:
        return CommandError(f"agent {self.tree.label(agent_id)} is dead; its history is "
                            "readable but it cannot change")

    async def say(self, agent_id: str, text: str) -> asyncio.Task:
        """Commit a user message, then start the agent's turn; returns the turn's task."""
        agent = self.tree[agent_id]
        if not text.strip():
            raise CommandError("empty message")
        if agent.dead:
            raise CommandError(f"agent {self.tree.label(agent_id)} is dead")
        if agent.busy:
            raise CommandError(f"agent {self.tree.label(agent_id)} is still working")
        if (await self.measure(agent_id)).state == "full":
            raise CommandError(CONTEXT_FULL)
        # Refused before anything is written: the message stays with the user.
        model = self.model_of(agent)
        if problem := self.models.ready(model):
            raise CommandError(problem)
        raw = await self.contexts.message_fits(agent_id, text)
        if (holder := await self.leases.take(agent_id)) is not None:  # before any write
            raise CommandError(busy_message(self.tree.label(agent_id), holder))
        batch = WriteBatch()
        batch.add(agent_id, "user", {"content": text})
        try:
            events = await self.commit(batch)
        except BaseException:
            await self.leases.release(agent_id)
            raise
        if events:
            self.contexts.counted(agent, model, events[0].id, raw)  # counted once, not again
        return self.start_turn(agent_id)

    # -- turns -----------------------------------------------------------------

    async def _dead_turn(self, agent_id: str, holder: Holder) -> None:
        """The process running this agent's turn ended without ending it (kill -9, a
        crash): its user message, still unanswered, is flagged as a cancelled turn's is
        (turns.run_turn), so no request holds it and the next one as two in a row, and
        /retry sends it again. Called holding the agent's lease, before any other write."""
        from ikigai_tui.core.turns import unanswered

        catch_up = getattr(self.store, "catch_up", None)
        if catch_up is not None:
            await catch_up()  # everything the dead process committed
        replayer = await self.replayer(agent_id)
        waiting = unanswered(self.tree[agent_id])
        if waiting is None or waiting in replayer.flagged:
            return
        batch = WriteBatch()
        batch.add(agent_id, "interrupted", {
            "reason": f"the ikigai process running this turn ended (pid {holder.pid} on "
                      f"{holder.host})", "unanswered": waiting})
        await self.commit(batch)

    def start_turn(self, agent_id: str) -> asyncio.Task:
        from ikigai_tui.core.turns import run_turn

        agent = self.tree[agent_id]
        loop = asyncio.get_running_loop()
        task = agent.turn.begin(lambda: loop.create_task(self._leased(run_turn, agent)))
        self.notify(AgentChanged(agent_id))
        return task

    async def _leased(self, run_turn, agent: AgentRuntime) -> bool:
        """The turn, holding the agent's lease (say took it already; a fork's child or a
        pending message at open take it here); another process's lease ends it at once."""
        try:
            holder = await self.leases.take(agent.id)
        except BaseException:
            agent.turn.end()
            raise
        if holder is not None:
            agent.turn.end()
            self.notify(ErrorNotice(agent.id, busy_message(self.tree.label(agent.id), holder)))
            self.notify(AgentChanged(agent.id))
            return False
        try:
            return await run_turn(self, agent)
        finally:
            self.leases.release_soon(agent.id)

    async def after_turn(self, agent: AgentRuntime) -> None:
        """What follows a turn that was not cancelled: auto-compaction's check."""
        from ikigai_tui.core.compaction.after_turn import after_turn

        await after_turn(self.compactor, agent)

    def start_if_pending(self, agent_id: str) -> asyncio.Task | None:
        """Start a turn if the context ends with an unanswered user message."""
        agent = self.tree[agent_id]
        if agent.dead or agent.busy:
            return None
        if agent.replayer is None or agent.replayer.last_kind() != "user":
            return None
        return self.start_turn(agent_id)

    async def finish_turn(self, agent: AgentRuntime) -> None:
        """Commit the writes deferred to the end of the turn (exactly as resolved when
        they were accepted), then go idle."""
        from ikigai_tui.core.notices import ErrorNotice

        agent.turn.finishing()

        def failed(text: str, exc: Exception) -> None:
            self.notify(ErrorNotice(agent.id, f"deferred {text}: {exc}"))

        try:
            await self.commands.flush_deferred(agent.id, failed, (CommandError, StoreError))
        finally:
            agent.turn.end()
        self.notify(AgentChanged(agent.id))

    def unanswered(self, agent_id: str) -> int | None:
        """The user message an idle agent's context ends with, still unanswered (its turn
        failed or was cancelled: /retry sends it again), or None."""
        from ikigai_tui.core.turns import unanswered

        agent = self.tree[agent_id]
        return None if agent.in_turn else unanswered(agent)

    def running(self) -> list[asyncio.Task]:  # turns, and wakes and reports that start more
        return [a.task for a in self.tree if a.busy and a.task is not None] + self.mailwake.pending()

    async def wait_idle(self) -> None:
        """Wait until no agent is working (children started meanwhile included)."""
        while tasks := self.running():
            await asyncio.gather(*tasks, return_exceptions=True)

    async def cancel_turns(self, agent_ids: list[str]) -> None:
        tasks = self.mailwake.stop_waits(agent_ids)  # and their /wait: Esc stops it too
        for agent_id in agent_ids:
            task = self.tree[agent_id].task
            if task is not None and not task.done():
                task.cancel()
                tasks.append(task)
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)


def _conflict(batch: WriteBatch, exc: ConflictError) -> str:
    names = [a.name for a in batch.new_agents if a.name]
    if names and "name" in str(exc):
        return (f"an agent named '{names[0]}' already exists (another ikigai process made it "
                "just now); nothing was written")
    return f"another ikigai process changed the log at the same time ({exc}); nothing was written"

