"""The `filter_context` tool: the LLM's own /forget and /remember, in two steps.

`preview` runs the same matcher as /forget CRITERIA over the agent's context (the
planning conversation itself left out) and returns the matches with previews, the
message count and a token estimate; it writes nothing. `apply` (mode, message ids)
writes one `filter` event, applied when the turn ends like any context change, and that
event also takes the planning conversation out of the context: from the user message
that asked for it through the apply call and its result (SPEC §8, seed 000). Written
after the apply's result, the filter's id is not known to it: the result names the apply
call's id, which the filter event records as `call` (context_review.change_reference).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.events import message_text
from ikigai_tui.core.matching import MODES, Candidate, exchanges
from ikigai_tui.core.commands.proposals import FilterProposal
from ikigai_tui.core.provider import ProviderError
from ikigai_tui.core.tools import TURN, ToolContext, ToolResult
from ikigai_tui.core.tools.context_review import (change_reference, outcome_reply, refusal_line,
                                                   review_change)

if TYPE_CHECKING:
    from ikigai_tui.core.replay.replayer import Replayer

NAME = "filter_context"
PREVIEW_CHARS = 160
MAX_LISTED = 200  # matches listed in a preview's reply; the count covers them all


def filter_context_schema() -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": NAME,
            "description": (
                "Forget messages of your own context, or keep only some. First call it with "
                "action 'preview' and the criteria (what to match, in the user's words): it "
                "returns the matching messages without changing anything; show them to the "
                "user. When the user agrees, call it with action 'apply', the same mode and "
                "the message ids. 'forget' removes those ids; 'remember' keeps only them. "
                "After apply, this planning conversation also leaves the context. Changes "
                "apply when this turn ends; /undo reverses them."),
            "parameters": {
                "type": "object",
                "properties": {
                    "action": {"type": "string", "enum": ["preview", "apply"]},
                    "mode": {"type": "string", "enum": list(MODES)},
                    "criteria": {"type": "string",
                                 "description": "preview: what the messages are about"},
                    "message_ids": {"type": "array", "items": {"type": "integer"},
                                    "description": "apply: the ids to forget, or to keep"},
                },
                "required": ["action", "mode"],
            },
        },
    }


def id_ranges(ids: list[int]) -> str:
    """[3, 5, 6, 7, 9] -> "3,5-7,9" (sorted ids)."""
    parts: list[str] = []
    start = prev = None
    for i in ids + [None]:  # type: ignore[list-item]
        if start is not None and i == prev + 1:
            prev = i
            continue
        if start is not None:
            parts.append(str(start) if start == prev else f"{start}-{prev}")
        start = prev = i
    return ",".join(parts)


def planning_ids(replayer: Replayer, call_event: int | None) -> list[int]:
    """The planning conversation: the run of exchanges that end at this call and each hold
    a filter_context call, from the first one's opening user message through the call."""
    items = [(k, e[1], e[2]) for k, e in replayer.ctx.items()
             if call_event is None or k <= call_event]
    groups = exchanges([Candidate(k, kind, "") for k, kind, _ in items])
    calls = {k for k, kind, payload in items if kind == "tool_call" and payload.get("name") == NAME}
    taken: list[int] = []
    for group in reversed(groups):
        ids = [c.id for c in group]
        if taken and not calls.intersection(ids):
            break
        taken[:0] = ids
    return taken


async def previewed_with(session: Any, replayer: Replayer, planning: tuple[int, ...],
                         mode: str) -> tuple[str | None, str | None]:
    """The criteria (and the matcher) of the planning conversation's latest preview of
    this mode, which the filter event keeps: (None, None) when it had none."""
    full = await session.bodies.entries(replayer, list(planning), cache=False)
    for key in sorted(full, reverse=True):
        _seq, kind, payload = full[key]
        if kind != "tool_call" or payload.get("name") != NAME:
            continue
        try:
            args = json.loads(payload.get("arguments") or "{}")
        except json.JSONDecodeError:
            continue
        if not isinstance(args, dict) or args.get("action") != "preview" or args.get("mode") != mode:
            continue
        criteria = args.get("criteria")
        if not isinstance(criteria, str) or not criteria.strip():
            continue
        return criteria.strip(), _preview_matcher(full.get(replayer.result_of.get(key)))
    return None, None


def _preview_matcher(result: tuple | None) -> str | None:
    """The matcher a preview's result names."""
    try:
        reply = json.loads(result[2].get("content") or "{}") if result else {}
    except json.JSONDecodeError:
        return None
    matcher = reply.get("matcher") if isinstance(reply, dict) else None
    return matcher if isinstance(matcher, str) else None


class FilterContextTool:
    name = NAME
    callers = frozenset({TURN})
    access = "ikigai"  # the program's own tool: governed by its own review

    def schema(self) -> dict[str, Any]:
        return filter_context_schema()

    async def execute(self, context: ToolContext, arguments: Any) -> ToolResult:
        if not isinstance(arguments, dict):
            return ToolResult("Error: filter_context takes an object of arguments", True)
        action, mode = arguments.get("action"), arguments.get("mode")
        if mode not in MODES:
            return ToolResult(f"Error: mode must be one of {', '.join(MODES)}", True)
        try:
            if action == "preview":
                return await self._preview(context, mode, arguments.get("criteria"))
            if action == "apply":
                return await self._apply(context, mode, arguments.get("message_ids"))
        except (CommandError, ProviderError) as exc:
            return ToolResult(f"Error: {exc}", True)
        return ToolResult("Error: action must be 'preview' or 'apply'", True)

    async def _preview(self, context: ToolContext, mode: str, criteria: Any) -> ToolResult:
        if not isinstance(criteria, str) or not criteria.strip():
            return ToolResult("Error: preview needs the criteria (what to match)", True)
        session = context.host
        agent = session.tree[context.agent_id]
        replayer = await session.replayer(agent.id)
        planning = set(planning_ids(replayer, context.call_event))
        keys = [k for k in replayer.ctx if k not in planning]
        full: dict[int, tuple] = {}
        async for chunk in session.bodies.chunks(replayer, keys):  # the text, from the log
            full.update(chunk)
        candidates = [Candidate(k, e[1], message_text(e[1], e[2])) for k, e in full.items()]
        if not candidates:
            return ToolResult(json.dumps({"matching_messages": [], "message_count": 0,
                                          "token_estimate": 0, "note": "the context is empty"}))
        matcher = session.matcher(agent)
        report = await matcher.match(criteria.strip(), mode, candidates)
        meter = session.meter(agent)
        counter, counted = meter.counter, meter.cache
        listed, tokens = [], 0
        for match in report.matches:
            if match.id not in full:
                continue
            kind, payload = full[match.id][1], full[match.id][2]
            raw = counted.get(match.id)
            tokens += counter.scale(counter.message(kind, payload) if raw is None else raw)
            if len(listed) < MAX_LISTED:
                text = " ".join(message_text(kind, payload).split())
                listed.append({"id": match.id, "role": kind, "preview": text[:PREVIEW_CHARS],
                               "reason": match.reason})
        reply = {"mode": mode, "criteria": criteria.strip(), "matcher": report.matcher,
                 "matching_messages": listed, "message_count": len(report.matches),
                 "token_estimate": tokens, "context_messages": len(replayer.ctx)}
        if mode == "remember":
            reply["note"] = "apply with mode 'remember' keeps only the ids you pass; all else leaves"
        return ToolResult(json.dumps(reply))

    async def _apply(self, context: ToolContext, mode: str, ids: Any) -> ToolResult:
        if (not isinstance(ids, list) or not ids
                or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids)):
            return ToolResult("Error: apply needs message_ids, a non-empty list of integers", True)
        session = context.host
        agent = session.tree[context.agent_id]
        replayer = await session.replayer(agent.id)
        missing = [i for i in ids if i not in replayer.ctx]
        if missing:
            shown = ", ".join(map(str, missing[:10]))
            return ToolResult(f"Error: not in your context: {shown}; nothing was changed", True)
        planning = tuple(i for i in planning_ids(replayer, context.call_event))
        tokens = (await session.measure(agent.id)).tokens
        proposal = await FilterProposal.make(session.bodies, mode, sorted(set(ids)), replayer,
                                             session.meter(agent), tokens)
        criteria, matcher = await previewed_with(session, replayer, planning, mode)
        proposal = replace(proposal, planning=planning, review=True, criteria=criteria,
                           matcher=matcher, asked_by=session.tree.label(agent.id),
                           call=context.call_event)
        before = len(replayer.ctx)
        listed = id_ranges(sorted(set(ids)))
        reviewed = await review_change(session, agent.id, proposal)
        refused = (None if reviewed.refused_by is None
                   else (reviewed.refused_by, refusal_line(reviewed.refused_by)))
        result = await session.commands.submit(agent.id, f"/{mode} --ids {listed}", proposal,
                                               reviewed.verdict, source="llm", refused=refused)
        more: dict[str, Any] = {}
        if refused is None and context.call_event is not None:
            more["change"] = change_reference(context.call_event, result)
        return ToolResult(json.dumps(outcome_reply(
            proposal, reviewed, result, mode=mode, context_before=before,
            planning_conversation_ids=list(planning) if refused is None else [], **more)))
