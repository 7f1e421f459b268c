"""The command bus: parse -> validate -> handler -> (review) -> commit or defer.

Handlers get a `CommandContext`, never the session. A handler either fills the batch
and returns a `CommandResult`, or returns a `Proposal` that a reviewer answers before
anything is written. Nothing a command does happens before its batch is committed: the
effects that follow a write (start a child's turn, cancel a killed agent's turn) run
after it, and not at all when the commit fails.

An agent in the middle of a turn must not see its context change (no request may hold
half a tool exchange), so a context-changing command then is resolved at once (parsed,
validated, reviewed) and its batch kept: the turn's end commits exactly that batch,
never re-running the command against a context that has moved on.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ikigai_tui.core.commands.context import CommandContext, CommandServices, PendingOp, PendingRef
from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.errors import UsageError
from ikigai_tui.core.commands.parse import (
    ArgReader, CommandResult, CommandSpec, ParsedCommand, Registry,
)
from ikigai_tui.core.events import UNDOABLE_KINDS, NewEvent, WriteBatch
from ikigai_tui.core.commands.proposals import Proposal, Reviewer, Verdict, accept_all
from ikigai_tui.core.replay.replayer import Replayer

DEFERRED_PREFIX = "Accepted; applied when this turn ends: "


@dataclass
class Pending:
    """A command whose proposal awaits its reviewer's verdict; nothing written yet."""

    proposal: Proposal
    context: CommandContext
    text: str
    answered: bool = False


@dataclass
class Deferred:
    """A resolved write waiting for the end of its agent's turn."""

    serial: int
    text: str
    batch: WriteBatch
    after_commit: list[Callable[[], Any]] = field(default_factory=list)
    at_turn_end: list[Callable[[], None]] = field(default_factory=list)


class CommandBus:
    def __init__(self, registry: Registry, read_only: frozenset[str], *,
                 services: Callable[[], CommandServices],
                 replayer: Callable[[str], Awaitable[Replayer]],
                 commit: Callable[[WriteBatch], Awaitable[Any]],
                 dead_error: Callable[[str], CommandError],
                 busy_elsewhere: Callable[[str], Awaitable[None]] | None = None,
                 on_dead: frozenset[str] = frozenset()) -> None:
        self.registry = registry
        self.read_only = read_only
        self.on_dead = on_dead  # commands that write from a dead agent: /fork, /revive
        self._services = services
        self._replayer = replayer
        self._commit = commit
        self._dead_error = dead_error
        self._busy_elsewhere = busy_elsewhere
        self.deferred: dict[str, list[Deferred]] = {}
        self._serial = 0

    async def propose(self, agent_id: str, text: str | ParsedCommand,
                      source: str = "human") -> CommandResult | Pending:
        """Run the command up to its review: a result (already committed or deferred),
        or a Pending proposal for `answer`. `text` may come parsed already (the screen
        parses once to choose its dialog)."""
        parsed = text if isinstance(text, ParsedCommand) else self.registry.parse(text)
        spec = parsed.spec
        if source == "llm" and not spec.llm:
            raise CommandError(f"/{spec.name} is for the human only")
        services = self._services()
        agent = services.tree[agent_id]
        if agent.dead and spec.name not in self.read_only | self.on_dead:
            raise self._dead_error(agent_id)
        replayer = await self._replayer(agent_id)
        queued = self.deferred.get(agent_id, ())
        c = CommandContext(agent, replayer, source, spec, ArgReader(parsed.args), services,
                           pending_ops=_pending_ops(queued), pending_undos=_pending_undos(queued))
        c.add("command", {"text": parsed.text, "source": source})
        try:
            outcome = await spec.handler(c)
        except UsageError as exc:
            raise CommandError(f"{exc}. Usage: {spec.usage}") from exc
        if isinstance(outcome, Proposal):
            if outcome.dry_run:
                return await self._finish(c, parsed.text, CommandResult(outcome.preview_lines()),
                                          defer=False)
            return Pending(outcome, c, parsed.text)
        return await self._finish(c, parsed.text, outcome)

    async def answer(self, pending: Pending, verdict: Verdict,
                     refused: tuple[str, str] | None = None) -> CommandResult:
        """Write what the reviewer accepted (exactly that), or only the command record;
        `refused` (who, the line to say) marks a refusal of a change the LLM asked for."""
        c = pending.context
        if pending.answered:
            raise CommandError("this proposal was already answered")
        pending.answered = True
        if c.agent.dead:
            raise self._dead_error(c.agent.id)
        if not verdict.accepted:
            return await self._refused(c, pending.text, refused)
        result = pending.proposal.apply(c, verdict)
        return await self._finish(c, pending.text, result)

    async def submit(self, agent_id: str, command: str, proposal: Proposal, verdict: Verdict,
                     source: str = "llm", refused: tuple[str, str] | None = None) -> CommandResult:
        """Write a proposal a tool built and its caller already reviewed (the LLM's
        filter_context apply), as the command `command` would: recorded, deferred to the
        end of the agent's turn like any context change."""
        parsed = self.registry.parse(command)
        services = self._services()
        agent = services.tree[agent_id]
        if agent.dead:
            raise self._dead_error(agent_id)
        replayer = await self._replayer(agent_id)
        queued = self.deferred.get(agent_id, ())
        c = CommandContext(agent, replayer, source, parsed.spec, ArgReader(""), services,
                           pending_ops=_pending_ops(queued), pending_undos=_pending_undos(queued))
        c.add("command", {"text": parsed.text, "source": source})
        if not verdict.accepted:
            return await self._refused(c, parsed.text, refused)
        result = proposal.apply(c, verdict)
        return await self._finish(c, parsed.text, result)

    async def _refused(self, c: CommandContext, text: str,
                       refused: tuple[str, str] | None) -> CommandResult:
        """A refused proposal: only the command record, flagged with who refused a change
        the LLM asked for (`refused`: who, the line to say)."""
        line = "Cancelled."
        if refused is not None:
            c.batch.events[0].payload["refused"], line = refused
        return await self._finish(c, text, CommandResult([line]), defer=False)

    async def run(self, agent_id: str, text: str, source: str = "human",
                  review: Reviewer | None = None) -> CommandResult:
        outcome = await self.propose(agent_id, text, source)
        if isinstance(outcome, Pending):
            verdict = await (review or accept_all)(outcome.proposal)
            return await self.answer(outcome, verdict)
        return outcome

    async def _finish(self, c: CommandContext, text: str, result: CommandResult,
                      defer: bool = True) -> CommandResult:
        agent, spec = c.agent, c.spec
        if agent.dead and spec.name not in self.on_dead and len(c.batch.events) > 1:  # /model NAME
            raise self._dead_error(agent.id)
        c.batch.events[0].payload["output"] = list(result.lines)
        if defer and agent.in_turn and (spec.deferred or (spec.name == "check-mail" and c.source != "llm")):
            # Never change a context mid-turn: no request may hold half a tool exchange.
            self._serial += 1
            self.deferred.setdefault(agent.id, []).append(
                Deferred(self._serial, text, c.batch, c.after_commit, c.at_turn_end))
            return CommandResult([DEFERRED_PREFIX + " ".join(result.lines)], data=result.data)
        if spec.deferred and self._busy_elsewhere is not None:
            # Another process is in this agent's turn: it cannot hold this for its end.
            await self._busy_elsewhere(agent.id)
        await self._commit(c.batch)
        await _run_effects(c.after_commit)
        return result

    async def flush_deferred(self, agent_id: str, on_error: Callable[[str, Exception], None],
                             errors: tuple[type[Exception], ...] = (CommandError,)) -> None:
        """Commit the writes held for the end of this agent's turn, in order; a write that
        fails with one of `errors` (a full disk, say) is reported, and the others go on."""
        committed: dict[int, list[int]] = {}  # serial -> the ids its events got
        for item in self.deferred.pop(agent_id, []):
            try:
                if self._services().tree[agent_id].dead:
                    raise self._dead_error(agent_id)
                _resolve_refs(item.batch, committed)
                for settle in item.at_turn_end:
                    settle()
                events = await self._commit(item.batch)
                committed[item.serial] = [e.id for e in events or ()]
                await _run_effects(item.after_commit)
            except errors as exc:
                on_error(item.text, exc)


def _pending_ops(queued) -> tuple[PendingOp, ...]:
    return tuple(PendingOp(PendingRef(d.serial, i), e.kind, e.payload, d.text)
                 for d in queued for i, e in enumerate(d.batch.events) if e.kind in UNDOABLE_KINDS)


def _pending_undos(queued) -> frozenset:
    return frozenset(e.payload["target"] for d in queued for e in d.batch.events if e.kind == "undo")


def _resolve_refs(batch: WriteBatch, committed: dict[int, list[int]]) -> None:
    """Give an undo of a deferred write the id that write's event got."""
    for n, event in enumerate(batch.events):
        target = event.payload.get("target") if event.kind == "undo" else None
        if isinstance(target, PendingRef):
            ids = committed.get(target.serial)
            if ids is None or target.index >= len(ids):
                raise CommandError("the change it undoes was not saved")
            batch.events[n] = NewEvent(event.agent_id, event.kind, {**event.payload, "target": ids[target.index]})


async def _run_effects(effects: list[Callable[[], Any]]) -> None:
    """Run each effect; await the coroutines (a task an effect starts, say a child's
    turn, runs on its own)."""
    for effect in effects:
        outcome = effect()
        if inspect.iscoroutine(outcome):
            await outcome
