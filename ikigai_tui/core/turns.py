"""One turn, built on the gateway: plan, stream, commit, learn; tool rounds until the model
stops; nothing committed is lost."""

from __future__ import annotations

import asyncio
import logging
from contextlib import aclosing
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, NamedTuple, Protocol

from ikigai_tui.core.events import Event, WriteBatch
from ikigai_tui.core.notices import ErrorNotice, RetryNotice, StreamDelta, TurnFinished
from ikigai_tui.core.provider import ProviderError, Request, Retrying, TextDelta, ToolCall, Usage
from ikigai_tui.core.ports import StoreError
from ikigai_tui.core.tools.running import STOPPED, ToolInterrupted, ToolSettings, order_key

if TYPE_CHECKING:
    from ikigai_tui.core.agents import AgentRuntime
    from ikigai_tui.core.notices import Notice
    from ikigai_tui.core.tools import Tool

log = logging.getLogger(__name__)


RETRY_HINT = "/retry sends your message again"


class TurnPlan(Protocol):
    """A planned request (core/context.py's Plan): its model, our estimate of its input
    tokens before the model's correction, and the request itself."""

    model: str
    raw_estimate: float

    def request(self) -> Request: ...


class Streams(Protocol):
    """Where a turn's request goes (core/gateway.py)."""

    def stream(self, request: Request, *, purpose: str) -> AsyncIterator[object]: ...


class TurnHost(Protocol):
    """What a turn uses (the session answers all of it): plan the next request, reach the
    model, commit, tell, learn the model's token factor, run a tool, end the turn."""

    gateway: Streams
    tool_settings: ToolSettings  # max_tool_rounds: the tool rounds a turn may run

    async def plan(self, agent_id: str, *, messages: bool = False) -> TurnPlan: ...

    async def commit(self, batch: WriteBatch) -> list[Event]: ...

    def notify(self, notice: Notice) -> None: ...

    def learn(self, model: str, reported: int, raw_estimate: float) -> tuple[float, int] | None: ...

    async def run_tool(self, agent_id: str, name: str, arguments: str,
                       call_event: int | None) -> tuple[str, bool]:
        """(result text, is_error); a call stopped by a cancel may raise ToolInterrupted
        with what it had produced."""
        ...

    def tool(self, name: str) -> Tool | None:
        """The tool a call names (None: none is offered by that name)."""
        ...

    async def offer_tools(self, agent_id: str) -> None:
        """Ready the tools before the turn's first request (starts the MCP servers not
        tried yet)."""
        ...

    async def finish_turn(self, agent: AgentRuntime) -> None: ...

    async def after_turn(self, agent: AgentRuntime) -> None: ...


def unanswered(agent: AgentRuntime) -> int | None:
    """The id of the user message the context ends with (no reply to it yet), or None."""
    r = agent.replayer
    if r is None or not r.ctx:
        return None
    key = next(reversed(r.ctx))
    return key if r.ctx[key][1] == "user" else None


async def run_turn(session: TurnHost, agent: AgentRuntime) -> bool:
    """Returns True when the turn completed, False when it ended in an error. A turn that
    ends with its user message unanswered says so in the log (`unanswered` in its error
    or interrupted event): the replay flags the message, no later request holds it and
    the next user message as two in a row, and /retry sends it again."""
    error: str | None = None
    cancelled = False
    rounds = session.tool_settings.max_tool_rounds
    try:
        await session.offer_tools(agent.id)
        for _ in range(rounds):
            calls = await _one_round(session, agent)
            if not calls:
                break
            await _run_calls(session, agent, calls)
        else:
            error = f"stopped after {rounds} tool rounds"
            session.notify(ErrorNotice(agent.id, error))
    except Exception as exc:  # a provider or disk failure, or a bug: end the turn, keep the program
        expected = isinstance(exc, (ProviderError, StoreError))
        if not expected:
            log.exception("turn of %s failed", agent.id)
        error = str(exc) if expected else f"internal error: {exc!r}"
        # Kept in the history (never sent to the LLM) so a restart shows why the turn ended.
        payload: dict = {"message": error}
        if (waiting := unanswered(agent)) is not None:
            error = payload["message"] = f"{error}; {RETRY_HINT}"
            payload["unanswered"] = waiting
        batch = WriteBatch()
        batch.add(agent.id, "error", payload)
        try:
            await asyncio.shield(session.commit(batch))
        except StoreError as unsaved:
            # The log cannot take it either (a full disk, say): tell, and end the turn.
            session.notify(ErrorNotice(agent.id, error))
            if str(unsaved) != error:
                session.notify(ErrorNotice(agent.id, str(unsaved)))
        else:
            session.notify(ErrorNotice(agent.id, error, logged=True))
    except asyncio.CancelledError:
        cancelled = True
        # Esc, /kill, leaving: a message that got no reply at all is flagged as well.
        if (waiting := unanswered(agent)) is not None:
            batch = WriteBatch()
            batch.add(agent.id, "interrupted", {"reason": "cancelled", "unanswered": waiting})
            try:
                await asyncio.shield(session.commit(batch))
            except StoreError:
                pass  # a full disk: the cancel still ends the turn
        raise
    finally:
        await session.finish_turn(agent)
        try:
            if not cancelled:  # auto-compaction's check: it never fails the turn
                await session.after_turn(agent)
        finally:
            session.notify(TurnFinished(agent.id, error is None, error))
    return error is None


class _Outcome(NamedTuple):
    text: str
    is_error: bool
    interrupted: bool = False


async def _run_calls(session: TurnHost, agent: AgentRuntime, calls: list[Event]) -> None:
    """A reply's tool calls, run at once (each checks its own permission, in the
    registry), except calls writing one file, and the program's own commands, which run
    one after the other (core/tools/running.py's order_key); their results
    are committed in the calls' order, each as soon as it and those before it are done.
    A cancel (Esc, /kill) stops the calls still running and commits what they had
    produced, flagged interrupted, so every call has its result; then the cancel goes on."""
    last: dict[str, asyncio.Future] = {}  # the latest call of each order_key
    tasks: list[asyncio.Future] = []
    for event in calls:
        name, arguments = event.payload["name"], event.payload.get("arguments", "")
        key = order_key(session.tool(name), arguments)
        task = asyncio.ensure_future(_call(session, agent, event, last.get(key)))
        if key is not None:
            last[key] = task
        tasks.append(task)
    done = 0
    try:
        for task in tasks:
            await asyncio.wait([task])  # not `await task`: a cancel here must not reach it
            done += 1  # its commit is shielded: a cancel during it does not stop it
            await _commit_result(session, agent, calls[done - 1], task.result())
    except asyncio.CancelledError:
        left = tasks[done:]
        for task in left:
            task.cancel()
        if left:
            await asyncio.wait(left)
        for event, task in zip(calls[done:], left):
            await _commit_result(session, agent, event, task.result())
        raise
    except Exception:  # the log failed: no call goes on running unseen
        for task in tasks[done:]:
            task.cancel()
        raise


async def _call(session: TurnHost, agent: AgentRuntime, event: Event,
                after: asyncio.Future | None) -> _Outcome:
    """One call (after the call it must wait for, if any), never raising: a
    cancel gives the output so far, a tool's bug an error result the model sees."""
    payload = event.payload
    try:
        if after is not None:
            await asyncio.wait([after])
        text, is_error = await session.run_tool(agent.id, payload["name"],
                                                payload.get("arguments", ""), event.id)
        return _Outcome(text, is_error)
    except ToolInterrupted as stopped:
        output = stopped.output
        if output and not output.endswith("\n"):
            output += "\n"
        return _Outcome(output + STOPPED, True, True)
    except asyncio.CancelledError:  # only _run_calls cancels it, and goes on cancelling
        return _Outcome(STOPPED, True, True)
    except Exception as exc:  # a tool's bug: the call still gets its result
        log.exception("tool %s of %s failed", payload.get("name"), agent.id)
        return _Outcome(f"Error: internal error in the tool: {exc!r}", True)


async def _commit_result(session: TurnHost, agent: AgentRuntime, event: Event,
                         outcome: _Outcome) -> None:
    result = {"call_id": event.payload["call_id"], "call_event": event.id,
              "content": outcome.text, "is_error": outcome.is_error}
    if outcome.interrupted:
        result["interrupted"] = True
    batch = WriteBatch()
    batch.add(agent.id, "tool_result", result)
    await asyncio.shield(session.commit(batch))


async def _one_round(session: TurnHost, agent: AgentRuntime) -> list:
    plan = await session.plan(agent.id, messages=True)
    # The reply's pieces so far, for a view opened while it streams (until it is committed).
    parts = agent.turn.streaming()
    try:
        streamed = await _stream(session, agent, plan.request(), parts)
        return await _commit_round(session, agent, plan, streamed)
    finally:
        agent.turn.streamed()


class _Streamed(NamedTuple):
    text: str
    calls: list[ToolCall]
    usage: Usage | None


async def _stream(session: TurnHost, agent: AgentRuntime, request: Request,
                  parts: list[str]) -> _Streamed:
    """The reply, shown as it arrives (its pieces in `parts`); a partial reply is kept if
    the stream ends badly."""
    calls: list[ToolCall] = []
    usage: Usage | None = None
    try:
        async with aclosing(session.gateway.stream(request, purpose="turn")) as items:
            async for item in items:
                _take(session, agent, item, parts, calls)
                if isinstance(item, Usage):
                    usage = item
    except asyncio.CancelledError:
        await _commit_partial(session, agent, parts, "cancelled")
        raise
    except ProviderError as exc:
        await _commit_partial(session, agent, parts, str(exc))
        raise
    return _Streamed("".join(parts), calls, usage)


def _take(session: TurnHost, agent: AgentRuntime, item: object, parts: list[str],
          calls: list[ToolCall]) -> None:
    """One item of the stream: text is shown as it comes, retries are told."""
    if isinstance(item, TextDelta):
        parts.append(item.text)
        session.notify(StreamDelta(agent.id, item.text, len(parts)))
    elif isinstance(item, ToolCall):
        calls.append(item)
    elif isinstance(item, Retrying):
        session.notify(RetryNotice(agent.id, item.attempt, item.delay, item.reason))


async def _commit_round(session: TurnHost, agent: AgentRuntime, plan: TurnPlan, streamed: _Streamed) -> list:
    """The reply, its tool calls and its usage in one batch (with the learned factor);
    returns the committed tool-call events."""
    batch = WriteBatch()
    if streamed.text:
        batch.add(agent.id, "assistant", {"content": streamed.text})
    call_indexes = [
        batch.add(agent.id, "tool_call", {"call_id": c.call_id, "name": c.name, "arguments": c.arguments})
        for c in streamed.calls
    ]
    if streamed.usage is not None:
        _learn(session, batch, agent, plan, streamed.usage)
    events = await asyncio.shield(session.commit(batch)) if batch.events else []
    return [events[i] for i in call_indexes]


def _learn(session: TurnHost, batch: WriteBatch, agent: AgentRuntime, plan: TurnPlan, usage: Usage) -> None:
    """Record the reported usage beside our estimate, and learn the model's factor from it."""
    batch.add(agent.id, "usage", {"model": plan.model, "input_tokens": usage.input_tokens,
                                  "output_tokens": usage.output_tokens,
                                  "estimated_input": round(plan.raw_estimate, 1)})
    learned = session.learn(plan.model, usage.input_tokens, plan.raw_estimate)
    if learned is not None:
        batch.factors.append((plan.model, *learned))


async def _commit_partial(session: TurnHost, agent: AgentRuntime, parts: list[str], reason: str) -> None:
    """What arrived before a cancel or a failure is kept, flagged interrupted."""
    text = "".join(parts)
    if not text:
        return
    batch = WriteBatch()
    batch.add(agent.id, "assistant", {"content": text, "interrupted": True, "reason": reason})
    await asyncio.shield(session.commit(batch))

