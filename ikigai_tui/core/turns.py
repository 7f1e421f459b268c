"""One turn: request, stream, tool rounds, until the model stops; nothing committed is lost."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from ikigai_tui.core.agents import AgentRuntime
from ikigai_tui.core.events import WriteBatch
from ikigai_tui.core.notices import ErrorNotice, RetryNotice, StreamDelta, TurnFinished
from ikigai_tui.core.provider import ProviderError, Request, Retrying, TextDelta, ToolCall, Usage
from ikigai_tui.core.request import build_messages, system_text
from ikigai_tui.core.store_errors import StoreError
from ikigai_tui.core.tools import execute_tool, tool_schemas

if TYPE_CHECKING:
    from ikigai_tui.core.session import Session

MAX_TOOL_ROUNDS = 25
log = logging.getLogger(__name__)


async def run_turn(session: Session, agent: AgentRuntime) -> bool:
    """Returns True when the turn completed, False when it ended in an error."""
    error: str | None = None
    try:
        for _ in range(MAX_TOOL_ROUNDS):
            calls = await _one_round(session, agent)
            if not calls:
                break
            for event in calls:
                payload = event.payload
                text, is_error = await execute_tool(
                    session, agent.id, payload["name"], payload.get("arguments", "")
                )
                batch = WriteBatch()
                batch.add(agent.id, "tool_result", {
                    "call_id": payload["call_id"], "call_event": event.id,
                    "content": text, "is_error": is_error,
                })
                await asyncio.shield(session.commit(batch))
        else:
            error = f"stopped after {MAX_TOOL_ROUNDS} tool rounds"
            session.notify(ErrorNotice(agent.id, error))
    except Exception as exc:  # a provider or disk failure, or a bug: end the turn, keep the program
        expected = isinstance(exc, (ProviderError, StoreError))
        if not expected:
            log.exception("turn of %s failed", agent.id)
        error = str(exc) if expected else f"internal error: {exc!r}"
        # Kept in the history (never sent to the LLM) so a restart shows why the turn ended.
        batch = WriteBatch()
        batch.add(agent.id, "error", {"message": error})
        try:
            await asyncio.shield(session.commit(batch))
        except StoreError as unsaved:
            # The log cannot take it either (a full disk, say): tell, and end the turn.
            session.notify(ErrorNotice(agent.id, error))
            if str(unsaved) != error:
                session.notify(ErrorNotice(agent.id, str(unsaved)))
        else:
            session.notify(ErrorNotice(agent.id, error, logged=True))
    finally:
        await session.finish_turn(agent)
        session.notify(TurnFinished(agent.id, error is None, error))
    return error is None


async def _one_round(session: Session, agent: AgentRuntime) -> list:
    replayer = await session.replayer(agent.id)
    model = session.model_of(agent)
    provider = session.providers.get(model)
    await session.measure(agent.id)  # prunes whole turns from the front to fit the budget
    meter = session.meter(agent)
    tools = tool_schemas()
    request = Request(model, system_text(replayer), build_messages(replayer, meter.window_ids()), tools)
    raw_estimate = meter.raw_request(replayer, tools)
    parts: list[str] = []
    calls: list[ToolCall] = []
    usage: Usage | None = None
    try:
        async for item in provider.stream(request):
            if isinstance(item, TextDelta):
                parts.append(item.text)
                session.notify(StreamDelta(agent.id, item.text))
            elif isinstance(item, ToolCall):
                calls.append(item)
            elif isinstance(item, Usage):
                usage = item
            elif isinstance(item, Retrying):
                session.notify(RetryNotice(agent.id, item.attempt, item.delay, item.reason))
    except asyncio.CancelledError:
        await _commit_partial(session, agent, parts, "cancelled")
        raise
    except ProviderError as exc:
        await _commit_partial(session, agent, parts, str(exc))
        raise
    batch = WriteBatch()
    text = "".join(parts)
    if text:
        batch.add(agent.id, "assistant", {"content": text})
    call_indexes = [
        batch.add(agent.id, "tool_call", {"call_id": c.call_id, "name": c.name, "arguments": c.arguments})
        for c in calls
    ]
    if usage is not None:
        batch.add(agent.id, "usage", {"model": model, "input_tokens": usage.input_tokens,
                                      "output_tokens": usage.output_tokens,
                                      "estimated_input": round(raw_estimate, 1)})
        learned = session.learn(model, usage.input_tokens, raw_estimate)
        if learned is not None:
            batch.factors.append((model, *learned))
    events = await asyncio.shield(session.commit(batch)) if batch.events else []
    return [events[i] for i in call_indexes]


async def _commit_partial(session: Session, agent: AgentRuntime, parts: list[str], reason: str) -> None:
    """What arrived before a cancel or a failure is kept, flagged interrupted."""
    text = "".join(parts)
    if not text:
        return
    batch = WriteBatch()
    batch.add(agent.id, "assistant", {"content": text, "interrupted": True, "reason": reason})
    await asyncio.shield(session.commit(batch))

