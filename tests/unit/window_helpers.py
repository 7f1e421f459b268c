"""Helpers shared by the sliding-window tests (SPEC §7): the model and limit the pure
tests measure against, a fresh ContextMeter, and shortcuts to talk to a Session.
"""

from __future__ import annotations

from ikigai_tui.core.session import Session
from ikigai_tui.core.tokens.counter import TokenCounter
from ikigai_tui.core.tokens.window import ContextMeter

MODEL = "anthropic/x"
LIMIT = 200_000


def fresh_meter() -> ContextMeter:
    return ContextMeter(TokenCounter(MODEL))


async def talk(session: Session, agent_id: str, text: str) -> None:
    task = await session.say(agent_id, text)
    assert await task


async def chat(session: Session, turns: int, size: int = 400, agent_id: str | None = None) -> None:
    agent_id = agent_id or session.tree.root.id
    for i in range(turns):
        await talk(session, agent_id, f"question {i}: " + "q" * size)
