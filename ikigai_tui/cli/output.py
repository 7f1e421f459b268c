"""Read-only reports: `context`, `agents`, `log`, `export`. They never create a database."""

from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import sys
from typing import Any

from ikigai_tui.cli.event_words import cwd_words, event_line, filter_words, pruned_words, tool_output_words
from ikigai_tui.cli.print_mode import Channel
from ikigai_tui.config import Config, OptionError
from ikigai_tui.core.agents import AgentRuntime
from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.handlers.agents import status_of, status_words
from ikigai_tui.core.handlers.cwd import source as workspace_source
from ikigai_tui.core.events import Event, message_text
from ikigai_tui.core.tokens.words import sent_and_history
from ikigai_tui.core.tools.permissions import grant_words
from ikigai_tui.core.memory.change import words as memory_words
from ikigai_tui.core.session import Session
from ikigai_tui.support.inert import dumps
from ikigai_tui.core.handlers.history import context_history
from ikigai_tui.runtime import close_session, open_session


def resolve_agent(session: Session, ref: str | None) -> AgentRuntime:
    """The agent `--agent` names (an OptionError, status 2, if none), else the root."""
    if ref:
        try:
            return session.tree.resolve(ref)
        except CommandError as exc:
            raise OptionError(str(exc).replace("See /agents.", "See `ikigai agents`.")) from None
    root = session.tree.root
    if root is None:
        raise CommandError("this database has no agents yet; start with `ikigai run`")
    return root


def _time(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.timezone.utc).isoformat(timespec="seconds")


async def context_data(session: Session, agent: AgentRuntime) -> dict[str, Any]:
    r = await session.replayer(agent.id)
    plan = await session.plan(agent.id)
    window = plan.window
    in_window = set(plan.window_ids)
    # The pruned messages the summary sent stands for: the context's first ones.
    covered = plan.window.pruned_covered
    summarised = set([k for k, e in r.ctx.items() if e[1] != "summary"][:covered]) if covered else set()
    messages = []
    full: dict[int, tuple] = {}
    async for chunk in session.bodies.chunks(r, list(r.ctx)):  # the text, from the log
        full.update(chunk)
    counter = session.meter(agent).counter
    cleared = []
    for mid, (_seq, kind, payload) in full.items():
        if mid in r.cleared:
            cleared.append(_cleared(mid, payload, full, r.cleared[mid], counter))
        item: dict[str, Any] = {"id": mid, "role": kind, "content": message_text(kind, payload),
                                "in_window": mid in in_window or kind == "summary"}
        if kind == "tool_call":
            item.update(name=payload.get("name"), arguments=payload.get("arguments"),
                        call_id=payload.get("call_id"))
        elif kind == "tool_result":
            item.update(call_id=payload.get("call_id"), call_event=payload.get("call_event"))
        elif kind == "summary":
            item["replaced"] = payload.get("replaced", [])
        if mid in summarised:
            item["summarised"] = True  # pruned, and in the summary of the pruned turns
        if payload.get("interrupted"):
            item["interrupted"] = True
        if payload.get("failed"):  # its turn failed or was cancelled (/retry)
            item["failed"] = payload["failed"]
        if mid in r.cleared:  # sent as its stub (`cleared_tool_results`)
            item["cleared"] = True
        messages.append(item)
    return {
        "agent": agent.id,
        "name": agent.name,
        "model": session.model_of(agent),
        "system": r.system,
        "pins": await pins_data(session, agent),
        # where the agent's file tools work, and why: "cwd" (a cwd event of this agent),
        # "fork" (inherited), "start" (the folder ikigai was started in)
        "workspace": str(session.workspace(agent.id)),
        "workspace_source": workspace_source(r, agent.parent_id is not None),
        # "always" answers of the permission dialog in force, inherited ones first
        "permissions": [{"tool": tool, "rule": rule, "inherited": index < len(r.base.granted)}
                        for index, (tool, rule) in enumerate((*r.base.granted, *r.granted))],
        "cleared_tool_results": cleared,  # sent as a one-line stub (/restore ID)
        "messages": messages,
        "marks": [{"name": m.name, "label": m.label, "position": r.mark_position(m),
                   "event": m.event_id} for m in r.valid_marks()],
        "tokens": window.tokens,  # what is sent (the request); "sent" says it in the words shown
        "sent": window.tokens,
        "history": window.tokens + window.outside,  # the pruned turns included
        "estimated": not window.exact,
        "budget": window.budget,
        # what decides it: a /budget of this agent, the fork it inherited it at, or the config
        "budget_source": ("budget" if r.budget_event is not None
                          else "fork" if agent.parent_id is not None else "config"),
        "limit": window.limit,
        # where the limit comes from: "map" (litellm's), "published" (the provider's figure
        # for a model the pinned map lacks), "config", "offline", or "assumed" (a guess)
        "limit_source": (limits := session.models.limits(session.model_of(agent))).source,
        "limit_assumed": limits.source == "assumed",
        "percent": round(window.percent, 1),
        "state": window.state,
        "window_start": window.start,
        "pruned_turns": window.pruned_turns,
        "breakdown": {"system": window.system, "tools": window.tools, "pins": window.pins,
                      "summaries": window.summaries, "window": window.window,
                      "outside": window.outside, "pruned_summary": window.pruned_summary},
        "summary_reserve": window.reserve,  # 0: summaries of pruned turns are off
        "pruned_summary": pruned_data(plan),
        "usage": (await session.usages.totals(agent.id)).as_dict(),
        # how it got here: the oldest message, the compactions in effect, the restores,
        # the context changes the LLM asked for and how many were applied
        "context_history": (await context_history(r, agent.id, session.tree,
                                                  session.store.page)).as_dict(),
    }


def _cleared(key: int, payload: dict, full: dict[int, tuple], by: int, counter) -> dict[str, Any]:
    """A tool result sent as its stub: its call, its tool, its tokens and those its stub
    saves, and the `tool_output` event that cleared it (None: inherited so at fork)."""
    call = payload.get("call_event")
    called = full.get(call)
    whole = {k: v for k, v in payload.items() if k != "cleared"}
    raw = counter.message("tool_result", whole)
    return {"id": key, "call_event": call, "call_id": payload.get("call_id"),
            "tool": called[2].get("name") if called is not None else None,
            "tokens": counter.scale(raw),
            "saved": max(0, counter.scale(raw) - counter.scale(counter.message("tool_result", payload))),
            "event": by or None}


def pruned_data(plan) -> dict[str, Any] | None:
    """The summary of the pruned turns the request holds, if one stands."""
    sent = plan.pruned
    if sent is None:
        return None
    summary = sent.summary
    return {"event": summary.event_id, "agent": summary.agent_id, "text": sent.text,
            "tokens": sent.tokens, "messages": summary.covered,
            "ranges": [list(r) for r in summary.ranges], "model": summary.model,
            "extractive": summary.extractive}


async def pins_data(session: Session, agent: AgentRuntime) -> list[dict[str, Any]]:
    """Each pin with its tokens: pins are always sent, never pruned nor compacted."""
    counter = session.meter(agent).counter
    return [{"number": i, "text": text, "tokens": counter.scale(counter.text(text))}
            for i, text in enumerate((await session.replayer(agent.id)).pins, 1)]


async def agents_data(session: Session) -> list[dict[str, Any]]:
    """Each agent; one idle in this process but running a turn in another ikigai process
    is "working", with that process (`elsewhere`: pid and host)."""
    tree = session.tree
    usage = await session.usages.report()
    out = []
    for a, depth in tree.walk():
        status, where = await status_of(a, session.leases.elsewhere)
        out.append({"id": a.id, "short_id": tree.short_id(a.id), "name": a.name,
                    "parent": a.parent_id, "status": status, "model": a.model,
                    "unread": a.unread, "depth": depth, "usage": usage[a.id].as_dict(),
                    "elsewhere": where})
    return out


def _event_data(event: Event) -> dict[str, Any]:
    return {"id": event.id, "agent": event.agent_id, "kind": event.kind,
            "payload": event.payload, "created_at": _time(event.created_at)}


async def _export(session: Session, agent: AgentRuntime, fmt: str, inherited: bool = False) -> str:
    """The agent's conversation as Markdown or JSON. A forked agent's begins with what it
    inherited from its parent: counted, or whole with `inherited`."""
    r = await session.replayer(agent.id)
    events = await session.store.events(agent.id)
    in_context = set(r.ctx)
    failed = {k for k, e in r.ctx.items() if e[1] == "user" and e[2].get("failed")}
    label = session.tree.label(agent.id)
    parent = session.tree.label(agent.parent_id) if agent.parent_id else None
    before = await session.bodies.inherited(r) if parent else []
    if fmt == "json":
        data = {
            "agent": agent.id, "name": agent.name, "parent": agent.parent_id,
            "model": session.model_of(agent), "inherited": len(before),
        }
        if inherited:
            data["inherited_messages"] = [{"id": key, "kind": kind, "payload": payload,
                                           "in_context": key in in_context}
                                          for key, kind, payload in before]
        data["events"] = [dict(_event_data(e), in_context=e.id in in_context) for e in events]
        return dumps(data, indent=2) + "\n"
    lines = [f"# ikigai agent {label}", "", f"Model: {session.model_of(agent)}"]
    if parent:
        count = f"{len(before):,} inherited message{'s' if len(before) != 1 else ''}"
        lines.append(f"Forked from {parent}: {count}" + (
            ", shown first." if inherited else " (not shown; `--inherited` includes them)."))

    def message(key: int, kind: str, payload: dict, note: str = "") -> None:
        if key not in in_context:
            note += " (not in context)"
        if payload.get("interrupted"):
            note += " (interrupted)"
        elif kind == "tool_result" and payload.get("is_error"):
            note += " (error)"
        if key in failed:
            note += " (its turn failed)"
        text = payload.get("content", "") if kind == "summary" else message_text(kind, payload)
        lines.extend(["", f"## {kind} #{key}{note}", "", text])

    if inherited and before:
        for key, kind, payload in before:
            message(key, kind, payload, " (inherited)")
        lines += ["", f"> The messages of {label} itself follow."]
    for e in events:
        if e.kind in ("user", "assistant", "tool_call", "tool_result"):
            message(e.id, e.kind, e.payload)
        elif e.kind == "error":
            lines += ["", f"> Error: {e.payload.get('message', '')}"]
        elif e.kind == "command":
            lines += ["", *_command_lines(e.payload.get("text", ""), e.payload.get("output") or [])]
        elif e.kind == "filter":
            lines += ["", f"> Context change: {filter_words(e.payload)}."]
        elif e.kind == "memory":
            lines += ["", f"> Memory change: {memory_words(e.payload)}."]
        elif e.kind in NOTED:
            lines += ["", f"> {NOTED[e.kind](e.payload)}."]
        elif e.kind == "pruned_summary":
            lines += ["", f"> {pruned_words(e.payload)}:", "",
                      *(f"> {line}" for line in str(e.payload.get("summary", "")).splitlines())]
    return "\n".join(lines) + "\n"


# The tool-era settings and changes the Markdown export notes, each on a line of its own.
NOTED = {"cwd": lambda p: "Workspace: " + cwd_words(p).removeprefix("workspace "),
         "tool_output": lambda p: "Tool output: " + tool_output_words(p),
         "permission": lambda p: "Permission: " + grant_words(p)}


def _command_lines(text: str, output: list[str]) -> list[str]:
    """A command in the Markdown export: on one line with its output when that is one
    line; else its output as it was shown, line for line, in a code block (a table, a
    list, /help: joined, they would run together)."""
    said = [line for chunk in output for line in str(chunk).split("\n")]
    command = _code_span(text)
    if len(said) <= 1:
        return [f"> {command}" + (f" — {said[0]}" if said and said[0] else "")]
    fence = "`" * max(3, _longest_backticks(said) + 1)
    return [f"> {command}", "", fence + "text", *said, fence]


def _code_span(text: str) -> str:
    """`text` as Markdown inline code, whatever backticks it holds."""
    ticks = "`" * (_longest_backticks([text]) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _longest_backticks(lines: list[str]) -> int:
    return max((len(run) for line in lines for run in re.findall(r"`+", line)), default=0)


def write_export(path: str, text: str) -> None:
    """The exact text, control characters and all, to a new file (0600: a conversation is
    private) or over an existing one (its mode kept)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with open(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
    except OSError as exc:
        raise CommandError(f"cannot write {path}: {exc.strerror}") from exc


async def report(args: argparse.Namespace, config: Config) -> int:
    """Text goes out inert (control characters as visible placeholders: a person may be
    reading, even through a pipe); JSON escapes them; `export --output` is exact."""
    out = Channel(sys.stdout)
    session = await open_session(config, create=False, readonly=True)
    try:
        if args.command == "agents":
            data = await agents_data(session)
            if args.json:
                out.line(dumps(data, indent=2))
            else:
                tree = session.tree
                for (a, depth), item in zip(tree.walk(), data):
                    mail = f", {a.unread} unread" if a.unread else ""
                    used = item["usage"]
                    cost = "cost unknown" if used["cost_usd"] is None else used["cost"]
                    spent = f"  {used['input_tokens']:,} in / {used['output_tokens']:,} out, {cost}"
                    status = status_words(item["status"], item["elsewhere"])
                    out.line(f"{'  ' * depth}{tree.label(a.id)}  {status}  {a.model}{mail}{spent}")
            return 0
        agent = resolve_agent(session, args.agent)
        if args.command == "context":
            data = await context_data(session, agent)
            if args.json:
                out.line(dumps(data, indent=2))
            else:
                out.line(f"Agent {session.tree.label(agent.id)}, model {data['model']}, "
                         + sent_and_history(data["sent"], data["history"], data["limit"],
                                            data["budget"], not data["estimated"]))
                out.line((await session.usages.totals(agent.id)).line())
                for m in data["messages"]:
                    rule = ("" if m["in_window"] else " (outside the window, summarised)"
                            if m.get("summarised") else " (outside the window)")
                    if m.get("failed"):
                        rule += " (its turn failed)"
                    out.line(f"#{m['id']} {m['role']}{rule}: {m['content']}")
            return 0
        if args.command == "log":
            events = await session.store.events(agent.id)
            if args.json:
                out.line(dumps([_event_data(e) for e in events], indent=2))
            else:
                seen: dict[int, Event] = {}
                for e in events:
                    out.line(event_line(e, seen))
                    seen[e.id] = e
            return 0
        if args.command == "export":
            text = await _export(session, agent, args.format, args.inherited)
            if args.output:
                write_export(args.output, text)
            else:
                out.write(text)
            return 0
        raise AssertionError(args.command)
    finally:
        await close_session(session)
