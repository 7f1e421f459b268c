"""`ikigai run`: inputs one per line; replies to stdout, errors to stderr."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import threading
from collections.abc import AsyncIterator
from typing import TextIO

from ikigai_tui.config import Config
from ikigai_tui.core.commands import CommandError
from ikigai_tui.core.notices import (
    ErrorNotice, EventsCommitted, Notice, RetryNotice, StreamDelta, TurnFinished,
)
from ikigai_tui.core.provider import ProviderError
from ikigai_tui.core.session import Session
from ikigai_tui.runtime import close_session, open_session


class Printer:
    """Shows the session headlessly: the focused agent streams, others print whole replies."""

    def __init__(self, session: Session, focus: str, out: TextIO, err: TextIO) -> None:
        self.session = session
        self.focus = focus
        self.out = out
        self.err = err
        self.streaming = False

    def __call__(self, notice: Notice) -> None:
        tree = self.session.tree
        if isinstance(notice, StreamDelta) and notice.agent_id == self.focus:
            self.out.write(notice.text)
            self.out.flush()
            self.streaming = True
        elif isinstance(notice, EventsCommitted):
            for event in notice.events:
                self._event(event)
        elif isinstance(notice, TurnFinished) and notice.agent_id == self.focus:
            self._end_line()
        elif isinstance(notice, ErrorNotice):
            self._end_line()
            where = "" if notice.agent_id == self.focus else f"[{tree.label(notice.agent_id)}] "
            print(f"Error: {where}{notice.message}", file=self.err, flush=True)
        elif isinstance(notice, RetryNotice):
            print(f"Retrying in {notice.delay:.1f}s (attempt {notice.attempt}): {notice.reason}",
                  file=self.err, flush=True)

    def _end_line(self) -> None:
        if self.streaming:
            self.out.write("\n")
            self.out.flush()
            self.streaming = False

    def _event(self, event) -> None:
        label = self.session.tree.label(event.agent_id)
        mine = event.agent_id == self.focus
        payload = event.payload
        if event.kind == "assistant":
            if payload.get("interrupted"):
                self._end_line()
                print(f"[interrupted: {payload.get('reason', '')}]", file=self.err, flush=True)
            elif not mine:
                print(f"[{label}] {payload['content']}", file=self.out, flush=True)
        elif event.kind == "tool_call":
            self._end_line()
            prefix = "" if mine else f"[{label}] "
            print(f"{prefix}-> {payload['name']} {payload.get('arguments', '')}", file=self.out, flush=True)
        elif event.kind == "tool_result":
            prefix = "" if mine else f"[{label}] "
            print(f"{prefix}<- {payload.get('content', '')}", file=self.out, flush=True)


async def _lines(path: str | None, prompt: bool) -> AsyncIterator[str]:
    if path is not None:
        try:
            with open(path, encoding="utf-8") as handle:
                lines = handle.read().splitlines()
        except OSError as exc:
            raise CommandError(f"cannot read script {path}: {exc.strerror}") from exc
        for line in lines:
            yield line
        return
    # A daemon thread, not the default executor: a thread blocked in readline() must
    # not keep the program alive after Ctrl-C.
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[str] = asyncio.Queue()
    wanted = threading.Event()

    def read() -> None:
        while True:
            wanted.wait()
            wanted.clear()
            line = sys.stdin.readline()
            loop.call_soon_threadsafe(queue.put_nowait, line)
            if not line:
                return

    threading.Thread(target=read, name="stdin", daemon=True).start()
    while True:
        if prompt:
            print("> ", end="", file=sys.stderr, flush=True)
        wanted.set()
        line = await queue.get()
        if not line:
            return
        yield line.rstrip("\n")


async def run(args: argparse.Namespace, config: Config, *, interactive: bool = False) -> int:
    session = await open_session(config)
    try:
        agent = session.tree.resolve(args.agent) if getattr(args, "agent", None) else session.tree.root
        assert agent is not None
        # An explicit --model switches this agent (recorded, like /model); the config
        # file and IKIGAI_MODEL only choose the model of a new database's root.
        if args.model and session.model_of(agent) != args.model:
            await session.command(agent.id, f"/model {args.model}")
        printer = Printer(session, agent.id, sys.stdout, sys.stderr)
        session.listeners.append(printer)
        tty = sys.stdin.isatty() and getattr(args, "script", None) is None
        if interactive and tty:
            print("ikigai (line mode): type a message, /help for commands, /exit to leave.",
                  file=sys.stderr)
        return await _run_inputs(session, agent.id, getattr(args, "script", None), tty)
    finally:
        await close_session(session)


async def _run_inputs(session: Session, agent_id: str, script: str | None, prompt: bool) -> int:
    failed = False
    loop = asyncio.get_running_loop()
    main = asyncio.current_task()

    def on_interrupt() -> None:
        # Ctrl-C stops the focused agent's reply (kept, flagged interrupted); when
        # nothing is streaming it leaves.
        task = session.tree[agent_id].task
        if task is not None and not task.done():
            task.cancel()
        elif main is not None:
            main.cancel()

    try:
        loop.add_signal_handler(signal.SIGINT, on_interrupt)
    except (NotImplementedError, RuntimeError):
        pass
    try:
        async for raw in _lines(script, prompt):
            line = raw.strip()
            if not line:
                continue
            try:
                if line.startswith("/"):
                    result = await session.command(agent_id, line)
                    for out in result.lines:
                        print(out, flush=True)
                    if result.exit:
                        break
                else:
                    task = await session.say(agent_id, line)
                    try:
                        if not await task:
                            failed = True
                    except asyncio.CancelledError:
                        if main is not None and main.cancelling():
                            raise
                        failed = True
            except (CommandError, ProviderError) as exc:
                print(f"Error: {exc}", file=sys.stderr, flush=True)
                failed = True
        await session.wait_idle()
    except asyncio.CancelledError:
        return 130
    finally:
        try:
            loop.remove_signal_handler(signal.SIGINT)
        except (NotImplementedError, RuntimeError):
            pass
    return 1 if failed else 0
