"""What a scrollback shows: transcript items made from log events, paged from SQLite."""

from __future__ import annotations

from dataclasses import dataclass, field

from ikigai_tui.core.events import Event
from ikigai_tui.core.replay.queries import removal_label

__all__ = ["SHOWN_KINDS", "Item", "item_from_event", "items_from_events", "removal_label"]

SHOWN_KINDS = ("user", "assistant", "tool_call", "tool_result", "command", "error", "mail")


@dataclass
class Item:
    key: int  # event id (negative for items that are not in the log)
    kind: str  # user | assistant | tool_call | tool_result | command | error | mail | note | stream
    text: str
    meta: dict = field(default_factory=dict)


def item_from_event(event: Event) -> Item | None:
    p = event.payload
    if event.kind in ("user", "assistant"):
        return Item(event.id, event.kind, str(p.get("content") or ""),
                    {"interrupted": bool(p.get("interrupted")), "reason": p.get("reason")})
    if event.kind == "tool_call":
        return Item(event.id, "tool_call", str(p.get("arguments") or ""),
                    {"name": p.get("name", "?"), "at": event.created_at})
    if event.kind == "tool_result":
        return Item(event.id, "tool_result", str(p.get("content") or ""),
                    {"error": bool(p.get("is_error")), "interrupted": bool(p.get("interrupted")),
                     "call_event": p.get("call_event")})
    if event.kind == "command":
        if p.get("source") == "llm":  # run by the slash tool: its call and result show it
            return None
        text = str(p.get("text") or "") + (" · woken by mail" if p.get("source") == "wake" else "")
        return Item(event.id, "command", text,
                    {"output": list(p.get("output") or []), "source": p.get("source")})
    if event.kind == "error":
        return Item(event.id, "error", str(p.get("message") or ""))
    if event.kind == "mail":  # arrived: a line in the recipient's scrollback
        sender = p.get("from_label") or str(p.get("from") or "?")[:6]
        what = ("report" if p.get("ok", True) else "failure report") if p.get("report") else "mail"
        return Item(event.id, "mail", str(p.get("text") or ""), {"from": str(sender), "what": what})
    return None


def items_from_events(events: list[Event]) -> list[Item]:
    return [item for item in map(item_from_event, events) if item is not None]
