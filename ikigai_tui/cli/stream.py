"""`--output-format json|stream-json`: what a run did, as JSON for programs.

The shape follows the agent terminals' headless modes (Claude Code's `stream-json`):
one object per line, each with a `type`, written as it happens, the last one a `result`
object that is also the whole output of `--output-format json` (with the same events,
text deltas left out, in its `events` list). Every object names its `agent` (an id),
so a child's work can be told from the focused agent's. JSON escapes every control
character (see inert.dumps): exact for a program, inert on a terminal.

    {"type": "system", "subtype": "init", "agent", "agent_name", "model", "database", "version"}
    {"type": "user", "agent", "event_id", "content"}
    {"type": "text_delta", "agent", "text"}                     (stream-json only)
    {"type": "assistant", "agent", "event_id", "content", "interrupted"}
    {"type": "tool_call", "agent", "event_id", "call_id", "name", "arguments"}
    {"type": "tool_result", "agent", "event_id", "call_id", "content"}
    {"type": "usage", "agent", "model", "input_tokens", "output_tokens"}
    {"type": "retry", "agent", "attempt", "delay_seconds", "reason"}
    {"type": "command", "agent", "text", "output"}             (`run` only: a /command's lines)
    {"type": "preview", "agent", "lines"}                      (`run` only: the preview its text
                                                               prints, what /forget matched, a
                                                               /compact's summary)
    {"type": "compaction", "agent", "kind", "text"}             (auto-compaction and pruned-turn
                                                               summaries: "warning", "note", "done")
    {"type": "compact", "agent", "event_id", "replaced", "before", "after", "summary"}
    {"type": "pruned_summary", "agent", "event_id", "messages", "new", "tokens", "summary"}
    {"type": "error", "agent", "message"}
    {"type": "result", "subtype": "success" | "error" | "interrupted", "is_error",
     "exit_code", "agent", "model", "result", "duration_ms", "usage", "errors"}
"""

from __future__ import annotations

import time
from typing import Any, TextIO

from ikigai_tui import __version__
from ikigai_tui.cli.print_mode import Channel
from ikigai_tui.core.notices import CompactionNotice
from ikigai_tui.core.notices import (
    ErrorNotice, EventsCommitted, Notice, RetryNotice, StreamDelta,
)
from ikigai_tui.core.commands.proposals import ACCEPT_ALL, Proposal, Verdict, printed_preview
from ikigai_tui.core.session import Session
from ikigai_tui.core.usage.ledger import UsageLedger
from ikigai_tui.support.inert import dumps

FORMATS = ("text", "json", "stream-json")
SUBTYPES = {0: "success", 1: "error", 2: "error"}  # any other status: interrupted


class JsonPrinter:
    """A session listener (as cli_run.Printer) that writes JSON instead of text."""

    def __init__(self, session: Session, focus: str, out: TextIO, err: TextIO, *,
                 stream: bool) -> None:
        self.session = session
        self.focus = focus
        self.out = Channel(out)
        self.err = Channel(err)
        self.stream = stream
        self.started = time.monotonic()
        self.events: list[dict[str, Any]] = []  # for `json`: all but the deltas
        self.errors: list[str] = []
        self.reply = ""  # the focused agent's latest reply
        self._usage: list[tuple[int, str, dict]] = []

    # -- what happens ------------------------------------------------------------

    def init(self) -> None:
        agent = self.session.tree[self.focus]
        self._emit({"type": "system", "subtype": "init", "agent": agent.id,
                    "agent_name": agent.name, "model": self.session.model_of(agent),
                    "database": str(self.session.store.path), "version": __version__})

    def __call__(self, notice: Notice) -> None:
        if isinstance(notice, StreamDelta):
            if self.stream:
                self._write({"type": "text_delta", "agent": notice.agent_id, "text": notice.text})
        elif isinstance(notice, EventsCommitted) and not notice.foreign:
            for event in notice.events:
                self._event(event)
        elif isinstance(notice, ErrorNotice):
            self.error(notice.message, notice.agent_id)
        elif isinstance(notice, CompactionNotice):
            if notice.kind == "error":
                self.error(notice.text, notice.agent_id)
            else:
                self._emit({"type": "compaction", "agent": notice.agent_id, "kind": notice.kind,
                            "text": notice.text})
        elif isinstance(notice, RetryNotice):
            self._emit({"type": "retry", "agent": notice.agent_id, "attempt": notice.attempt,
                        "delay_seconds": round(notice.delay, 3), "reason": notice.reason})
            self.err.line(f"Retrying in {notice.delay:.1f}s (attempt {notice.attempt}): "
                          f"{notice.reason}")

    def _event(self, event) -> None:
        payload, agent = event.payload, event.agent_id
        base = {"agent": agent, "event_id": event.id}
        if event.kind == "user":
            self._emit({"type": "user", **base, "content": payload.get("content", "")})
        elif event.kind == "assistant":
            content = payload.get("content") or ""
            self._emit({"type": "assistant", **base, "content": content,
                        "interrupted": bool(payload.get("interrupted"))})
            if agent == self.focus and content:
                self.reply = content
        elif event.kind == "tool_call":
            self._emit({"type": "tool_call", **base, "call_id": payload.get("call_id"),
                        "name": payload.get("name"), "arguments": payload.get("arguments", "")})
        elif event.kind == "tool_result":
            self._emit({"type": "tool_result", **base, "call_id": payload.get("call_id"),
                        "content": payload.get("content", "")})
        elif event.kind == "compact":
            self._emit({"type": "compact", **base, "replaced": len(payload.get("ids") or ()),
                        "before": payload.get("before"), "after": payload.get("after"),
                        "summary": payload.get("summary", "")})
        elif event.kind == "pruned_summary":
            self._emit({"type": "pruned_summary", **base, "messages": payload.get("messages"),
                        "new": payload.get("new"), "tokens": payload.get("tokens"),
                        "summary": payload.get("summary", "")})
        elif event.kind == "usage":
            self._usage.append((event.id, "usage", payload))
            self._emit({"type": "usage", "agent": agent, "model": payload.get("model"),
                        "input_tokens": int(payload.get("input_tokens") or 0),
                        "output_tokens": int(payload.get("output_tokens") or 0)})

    def error(self, message: str, agent: str | None = None) -> None:
        """An error: a JSON object on stdout, and the usual `Error:` line on stderr."""
        agent = agent or self.focus
        self.errors.append(message)
        self._emit({"type": "error", "agent": agent, "message": message})
        where = "" if agent == self.focus else f"[{self.session.tree.label(agent)}] "
        self.err.line(f"Error: {where}{message}")

    def command(self, text: str, lines: list[str]) -> None:
        self._emit({"type": "command", "agent": self.focus, "text": text, "output": list(lines)})

    async def review(self, proposal: Proposal) -> Verdict:
        """As the text printer (the same rule, `printed_preview`): what a matcher found, a
        /compact's summary, is shown, then all of it applied."""
        lines = printed_preview(proposal)
        if lines:
            self._emit({"type": "preview", "agent": self.focus, "lines": lines})
        return ACCEPT_ALL

    def finish(self, status: int) -> None:
        """The last object: the run's outcome, its focused agent's reply, its usage."""
        totals = UsageLedger(self.session.usages.ledger.price).totals("run", self._usage)
        agent = self.session.tree[self.focus]
        result = {
            "type": "result", "subtype": SUBTYPES.get(status, "interrupted"),
            "is_error": status != 0, "exit_code": status, "agent": agent.id,
            "model": self.session.model_of(agent), "result": self.reply,
            "duration_ms": int((time.monotonic() - self.started) * 1000),
            "usage": totals.as_dict(), "errors": list(self.errors),
        }
        if not self.stream:
            result["events"] = self.events
        self._write(result)

    # -- output --------------------------------------------------------------------

    def _emit(self, obj: dict[str, Any]) -> None:
        if self.stream:
            self._write(obj)
        else:
            self.events.append(obj)

    def _write(self, obj: dict[str, Any]) -> None:
        self.out.line(dumps(obj))
