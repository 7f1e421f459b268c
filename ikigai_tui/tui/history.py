"""The input's history of each agent, read back from the log: what the user sent it
(messages and commands typed by a human), so Up recalls them after a restart too.

Mail and an LLM's own commands are not the user's typing and stay out. A message that
begins with `/` was typed as `//...`: it comes back that way, so sending it again sends
a message, not a command.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ikigai_tui.core.session import Session

__all__ = ["HISTORY_LIMIT", "typed_history"]

HISTORY_LIMIT = 500  # entries read back per agent (the newest)


def _typed(kind: str, payload: dict) -> str | None:
    if kind == "user":
        content = payload.get("content")
        if payload.get("mail") is not None or not isinstance(content, str):
            return None
        return "/" + content if content.lstrip().startswith("/") else content
    if kind == "command" and payload.get("source", "human") == "human":
        text = payload.get("text")
        return text if isinstance(text, str) else None
    return None


async def typed_history(session: Session, agent_id: str,
                        limit: int = HISTORY_LIMIT) -> list[str]:
    """The agent's newest `limit` typed entries, oldest first, without repeats in a row."""
    events = await session.store.page(agent_id, ("user", "command"), limit=limit)
    items: list[str] = []
    for event in events:
        text = _typed(event.kind, event.payload)
        if text and text.strip() and (not items or items[-1] != text):
            items.append(text)
    return items
