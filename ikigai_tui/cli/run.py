"""`ikigai run`: inputs one per line; replies to stdout, errors to stderr."""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
import threading
from collections.abc import AsyncIterator
from typing import NamedTuple, TextIO

from ikigai_tui.cli.output import resolve_agent
from ikigai_tui.cli.print_mode import Channel
from ikigai_tui.cli.stream import JsonPrinter
from ikigai_tui.config import Config, OptionError
from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.memory.service import memory_of
from ikigai_tui.core.notices import CompactingNotice, CompactionNotice, StoreTrouble
from ikigai_tui.core.tokens.limits import limit_words
from ikigai_tui.core.notices import (
    ErrorNotice, EventsCommitted, MatchingNotice, Notice, RetryNotice, StreamDelta, TurnFinished,
)
from ikigai_tui.core.commands.proposals import ACCEPT_ALL, Proposal, Verdict, printed_preview
from ikigai_tui.core.provider import ProviderError
from ikigai_tui.core.session import Session
from ikigai_tui.core.tools.context_review import LlmChange
from ikigai_tui.core.ports import StoreError
from ikigai_tui.runtime import close_session, open_session


class Printer:
    """Shows the session headlessly: the focused agent streams, others print whole replies.

    Everything goes through inert channels: model, tool and provider text never drives
    the terminal (see cli/print_mode.py)."""

    def __init__(self, session: Session, focus: str, out: TextIO, err: TextIO) -> None:
        self.session = session
        self.focus = focus
        self.out = Channel(out)
        self.err = Channel(err)
        self.streaming = False

    def __call__(self, notice: Notice) -> None:
        tree = self.session.tree
        if isinstance(notice, StreamDelta) and notice.agent_id == self.focus:
            self.out.write(notice.text)
            self.streaming = True
        elif isinstance(notice, EventsCommitted) and not notice.foreign:
            # What another process writes is that process's to print.
            for event in notice.events:
                self._event(event)
        elif isinstance(notice, TurnFinished) and notice.agent_id == self.focus:
            self._end_line()
        elif isinstance(notice, ErrorNotice):
            self._end_line()
            where = "" if notice.agent_id == self.focus else f"[{tree.label(notice.agent_id)}] "
            self.err.line(f"Error: {where}{notice.message}")
        elif isinstance(notice, MatchingNotice) and notice.total > 1 and notice.done:
            self.err.line(f"Matching: {notice.done}/{notice.total} parts reviewed "
                          f"({notice.matcher})")
        elif isinstance(notice, StoreTrouble):  # said once when lost, once when back
            self.err.line(f"Warning: {notice.line}" if notice.line else "The database is back.")
        elif isinstance(notice, CompactionNotice):
            # Auto-compaction's warnings and results are output (stdout), its failures
            # errors (stderr), as for commands.
            self._end_line()
            where = "" if notice.agent_id == self.focus else f"[{tree.label(notice.agent_id)}] "
            if notice.kind == "error":
                self.err.line(f"Error: {where}{notice.text}")
            else:
                self.out.line(f"{where}{notice.text}")
        elif isinstance(notice, CompactingNotice) and notice.total > 1 and notice.done:
            self.err.line(f"Compacting: {notice.done}/{notice.total} requests done ({notice.model})")
        elif isinstance(notice, RetryNotice):
            self.err.line(f"Retrying in {notice.delay:.1f}s (attempt {notice.attempt}): "
                          f"{notice.reason}")

    async def review(self, proposal: Proposal) -> Verdict:
        """Headless review: print the preview the proposal's presentation shows (what a
        matcher found, a /compact's summary and its saving), then apply all of it (the
        command's --dry-run only prints). Explicit `--ids` have no preview (SPEC §5):
        the user named them."""
        for line in printed_preview(proposal):
            self.out.line(line)
        return ACCEPT_ALL

    def error(self, message: str) -> None:
        self._end_line()
        self.err.line(f"Error: {message}")

    def command(self, text: str, lines: list[str]) -> None:
        for line in lines:
            self.out.line(line)

    def _end_line(self) -> None:
        if self.streaming:
            self.out.line()
            self.streaming = False

    def _event(self, event) -> None:
        label = self.session.tree.label(event.agent_id)
        mine = event.agent_id == self.focus
        payload = event.payload
        if event.kind == "assistant":
            if payload.get("interrupted"):
                self._end_line()
                self.err.line(f"[interrupted: {payload.get('reason', '')}]")
            elif not mine:
                self.out.line(f"[{label}] {payload['content']}")
        elif event.kind == "user" and payload.get("mail") is not None:
            self.out.line(payload["content"])  # a mail /check-mail read into the context
        elif event.kind == "tool_call":
            self._end_line()
            prefix = "" if mine else f"[{label}] "
            self.out.line(f"{prefix}-> {payload['name']} {payload.get('arguments', '')}")
        elif event.kind == "tool_result":
            prefix = "" if mine else f"[{label}] "
            self.out.line(f"{prefix}<- {payload.get('content', '')}")


def make_printer(session: Session, focus: str, fmt: str | None) -> Printer | JsonPrinter:
    """The listener for `--output-format` (text, json, stream-json)."""
    if fmt in (None, "text"):
        return Printer(session, focus, sys.stdout, sys.stderr)
    return JsonPrinter(session, focus, sys.stdout, sys.stderr, stream=fmt == "stream-json")


async def switch_model(session: Session, agent, model: str | None) -> None:
    """An explicit --model switches this agent (recorded, like /model); the config file
    and IKIGAI_MODEL only choose the model of a new database's root. An alias or a bare
    name is compared by the model it stands for."""
    if not model:
        return
    resolve = getattr(session.providers, "resolve", None)
    if session.model_of(agent) != (resolve(model) if resolve is not None else model):
        await session.command(agent.id, f"/model {model}")


def warn_assumed_limit(session: Session, agent, err, tty: bool | None = None) -> None:
    """One stderr line, when stderr is a terminal, if nothing knows the agent's model's
    input limit (a 128K guess): the name is accepted, and the user told how to set it.
    A script's stderr keeps to errors; /context and `context --json` say it too."""
    if not (sys.stderr.isatty() if tty is None else tty):
        return
    model = session.model_of(agent)
    limits = session.models.limits(model)
    if limits.source == "assumed":
        err.line(f"Warning: the input limit of {limit_words(limits, model)}.")


class BadLine(NamedTuple):
    """An input line that cannot be used: reported in one line, skipped, nothing written."""

    number: int
    reason: str


def decode_line(raw: bytes | bytearray, number: int) -> str | BadLine:
    """One input line as text. Invalid UTF-8 is refused, not guessed at: a message is
    stored exactly as typed or not at all."""
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return BadLine(number, f"line {number} is not valid UTF-8 (byte 0x{raw[exc.start]:02x} "
                               f"at column {exc.start + 1}); skipped, nothing written")


async def _lines(path: str | None, prompt: bool) -> AsyncIterator[str | BadLine]:
    if path is not None:
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError as exc:
            raise CommandError(f"cannot read script {path}: {exc.strerror}") from exc
        # Only LF (and CRLF) end a line: form feeds or U+2028 inside a message stay in it.
        lines = data.split(b"\n")
        if lines and not lines[-1]:
            lines.pop()
        for number, raw in enumerate(lines, 1):
            yield decode_line(raw, number)
        return
    # A daemon thread, not the default executor: a thread blocked in a read must not keep
    # the program alive after Ctrl-C. It reads the file descriptor itself, not
    # sys.stdin's buffer: a daemon thread holding that buffer's lock at exit aborts the
    # interpreter ("could not acquire lock ... at interpreter shutdown").
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[bytes | bytearray | None] = asyncio.Queue()
    fd = sys.stdin.fileno()

    def read() -> None:
        # A line so far, grown in place: a 10 MB line is one buffer (of its own mapping,
        # returned when freed: support/heap.py), not 160 pieces left in the heap and a joined copy.
        pending = bytearray()
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except InterruptedError:
                continue
            except OSError:  # EIO: the terminal went away
                chunk = b""
            if not chunk:
                break
            if b"\n" not in chunk:
                pending += chunk
                continue
            first, *lines, rest = chunk.split(b"\n")
            pending += first
            loop.call_soon_threadsafe(queue.put_nowait, pending)
            for line in lines:
                loop.call_soon_threadsafe(queue.put_nowait, line)
            pending = bytearray(rest)
        if pending:
            loop.call_soon_threadsafe(queue.put_nowait, pending)
        loop.call_soon_threadsafe(queue.put_nowait, None)

    threading.Thread(target=read, name="stdin", daemon=True).start()
    number = 0
    while True:
        if prompt:
            Channel(sys.stderr).write("> ")
        line = await queue.get()
        if line is None:
            return
        number += 1
        decoded = decode_line(line, number)
        del line  # the bytes are not kept while the message is stored and sent
        yield decoded


def _check_options(args: argparse.Namespace, config: Config) -> None:
    """What the command line names must exist before anything is created."""
    script = getattr(args, "script", None)
    if script is not None and (os.path.isdir(script) or not os.access(script, os.R_OK)):
        reason = ("no such file" if not os.path.exists(script) else
                  "it is a folder" if os.path.isdir(script) else "not readable")
        raise OptionError(f"cannot read script {script}: {reason}")
    if getattr(args, "agent", None) and not config.db_is_url and not os.path.exists(config.db):
        raise OptionError(f"no agent named or with id starting '{args.agent}': there is no "
                          f"database at {config.db} yet")


def accept_memory(err: Channel):
    """`run --yes` under memory_writes = "ask": each change is printed (stderr), then
    accepted."""
    async def accept(proposal: Proposal) -> Verdict:
        for line in printed_preview(proposal):
            err.line(line)
        return ACCEPT_ALL
    return accept


def attach_context_review(session: Session, err: Channel, yes: bool) -> None:
    """llm_context_changes = "ask" without a screen: under `--yes` each change the LLM
    asks for is applied as proposed (its preview on stderr); otherwise refused, in one
    stderr line (the tool result tells the LLM)."""
    async def accept(change: LlmChange) -> Verdict:
        err.line(f"{change.agent}: the LLM's change of its context accepted by --yes:")
        for line in printed_preview(change.proposal):
            err.line(line)
        return ACCEPT_ALL

    def refused(change: LlmChange) -> None:
        asked = getattr(change.proposal, "asked_for", "change its context")
        err.line(f"Refused: the LLM of {change.agent} asked to {asked}; context changes the "
                 "LLM asks for need --yes without a screen (llm_context_changes = \"ask\")")

    review = session.context_review
    review.reviewer, review.unreviewed = (accept if yes else None), refused


def attach_reviewers(session: Session, args: argparse.Namespace, err: Channel) -> None:
    """Headless answers: a tool's `ask` runs once under `--allow TOOL` or `--yes` (each
    printed on stderr) and is refused otherwise, the refusal the tool's result; `--yes`
    also accepts memory changes under memory_writes = "ask" and the context changes
    the LLM asks for under llm_context_changes = "ask" (refused otherwise)."""
    from ikigai_tui.core.tools.permissions import headless_reviewer

    yes = bool(getattr(args, "yes", False))
    session.permissions.reviewer = headless_reviewer(getattr(args, "allow", None) or [], yes,
                                                     err.line)
    attach_context_review(session, err, yes)
    if yes:
        memory_of(session).reviewer = accept_memory(err)


async def run(args: argparse.Namespace, config: Config, *, interactive: bool = False) -> int:
    _check_options(args, config)
    session = await open_session(config)
    try:
        agent = resolve_agent(session, getattr(args, "agent", None))
        await switch_model(session, agent, args.model)
        printer = make_printer(session, agent.id, getattr(args, "output_format", None))
        if isinstance(printer, JsonPrinter):
            printer.init()
        session.subscribe(printer)
        attach_reviewers(session, args, printer.err)
        warn_assumed_limit(session, agent, printer.err)
        tty = sys.stdin.isatty() and getattr(args, "script", None) is None
        if interactive and tty:
            printer.err.line("ikigai (line mode): type a message, /help for commands, /exit to leave.")
        status = await _run_inputs(session, printer, getattr(args, "script", None), tty)
        if isinstance(printer, JsonPrinter):
            printer.finish(status)
        return status
    finally:
        # Turns still running (children, or all of them after SIGTERM) are cancelled
        # here: what each had received is committed, flagged interrupted.
        await close_session(session)


async def _ended(task: asyncio.Task, main: asyncio.Task | None) -> bool:
    """Wait for a turn of the focused agent; True if it completed. Ctrl-C stops the turn
    (False); a cancel of `run` itself goes on up."""
    try:
        return bool(await task)
    except asyncio.CancelledError:
        if main is not None and main.cancelling():
            raise
        return False


# Signals that end `run`: a reply in progress is kept, flagged interrupted, as on Ctrl-C.
STOP_SIGNALS = {signal.SIGTERM: 143, signal.SIGHUP: 129}


async def _run_inputs(session: Session, printer: Printer | JsonPrinter, script: str | None, prompt: bool) -> int:
    agent_id = printer.focus
    failed = False
    stopped_by: list[int] = []
    interrupted: list[bool] = []
    loop = asyncio.get_running_loop()
    main = asyncio.current_task()

    def on_interrupt() -> None:
        # Ctrl-C stops the focused agent's reply (kept, flagged interrupted); when
        # nothing is streaming it leaves. A script stops after that reply (a person at
        # standard input goes on typing); either way the run ends with status 130.
        task = session.tree[agent_id].task
        if task is not None and not task.done():
            interrupted.append(True)
            task.cancel()
        elif main is not None:
            main.cancel()

    def on_stop(signum: int) -> None:
        # SIGTERM, SIGHUP (the terminal closed): leave, keeping every partial reply.
        stopped_by.append(signum)
        if main is not None:
            main.cancel()

    handled = [signal.SIGINT, *STOP_SIGNALS]
    try:
        loop.add_signal_handler(signal.SIGINT, on_interrupt)
        for signum in STOP_SIGNALS:
            loop.add_signal_handler(signum, on_stop, signum)
    except (NotImplementedError, RuntimeError):
        pass
    try:
        async for line in _lines(script, prompt):
            if isinstance(line, BadLine):
                printer.error(line.reason)
                failed = True
                continue
            line = line.strip()
            if not line:
                continue
            try:
                if line.startswith("/") and not line.startswith("//"):
                    before = session.tree[agent_id].task
                    result = await session.command(agent_id, line, review=printer.review)
                    printer.command(line, result.lines)
                    if result.exit:
                        break
                    task = session.tree[agent_id].task  # /retry starts the agent's turn
                    if task is not None and task is not before and not await _ended(task, main):
                        failed = True
                else:
                    task = await session.say(agent_id, line[1:] if line.startswith("//") else line)
                    if not await _ended(task, main):
                        failed = True
            except (CommandError, ProviderError, StoreError) as exc:
                printer.error(str(exc))
                failed = True
            if interrupted and script is not None:
                break
        await session.wait_idle()
    except asyncio.CancelledError:
        return STOP_SIGNALS.get(stopped_by[0], 130) if stopped_by else 130
    finally:
        for signum in handled:
            try:
                loop.remove_signal_handler(signum)
            except (NotImplementedError, RuntimeError):
                pass
    return 130 if interrupted else 1 if failed else 0
