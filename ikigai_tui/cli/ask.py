"""`ikigai -p PROMPT` and `ikigai ask PROMPT`: one message, its reply, then exit.

Exit status: 0 the turn completed; 1 the message was refused or its turn failed; 2 a
usage or configuration error (raised as ConfigError, before anything is written); 130
Ctrl-C (the reply so far is kept, flagged interrupted); 143 / 129 SIGTERM / SIGHUP.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys

from ikigai_tui.cli.output import resolve_agent
from ikigai_tui.cli.run import attach_reviewers, make_printer, switch_model, warn_assumed_limit
from ikigai_tui.cli.stream import JsonPrinter
from ikigai_tui.config import Config, ConfigError, OptionError
from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.ports import StoreError
from ikigai_tui.core.provider import ProviderError
from ikigai_tui.runtime import close_session, open_session

INTERRUPTED = 130
STOPS = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}


def prompt_of(args: argparse.Namespace) -> str:
    """The prompt: `-p TEXT`, `ask WORDS...`, or `-` for standard input."""
    text = args.prompt if isinstance(args.prompt, str) else " ".join(args.prompt or [])
    if text == "-":
        text = sys.stdin.read()
    if not text.strip():
        raise OptionError("the prompt is empty: give the message to send "
                          "(`ikigai -p \"...\"`, or `-` to read it from standard input)")
    return text


async def ask(args: argparse.Namespace, config: Config) -> int:
    text = prompt_of(args)
    if args.agent and not config.db_is_url and not os.path.exists(config.db):
        raise OptionError(f"no agent named or with id starting '{args.agent}': there is no "
                          f"database at {config.db} yet")
    session = await open_session(config)
    try:
        agent = resolve_agent(session, args.agent)
        # No key for the model is a configuration error (status 2), found before the
        # model switch or the message is written.
        model = session.providers.resolve(args.model) if args.model else session.model_of(agent)
        problem = session.providers.ready(model)
        if problem:
            raise ConfigError(problem)
        await switch_model(session, agent, args.model)
        printer = make_printer(session, agent.id, args.output_format)
        if isinstance(printer, JsonPrinter):
            printer.init()
        session.subscribe(printer)
        attach_reviewers(session, args, printer.err)
        warn_assumed_limit(session, agent, printer.err)
        status = await _one_turn(session, printer, agent.id, text)
        if isinstance(printer, JsonPrinter):
            printer.finish(status)
        return status
    finally:
        await close_session(session)


async def _one_turn(session, printer, agent_id: str, text: str) -> int:
    loop = asyncio.get_running_loop()
    main = asyncio.current_task()
    stopped: list[int] = []

    def on_signal(signum: int) -> None:
        # The reply in progress is kept, flagged interrupted; then the program leaves.
        stopped.append(signum)
        task = session.tree[agent_id].task
        if task is not None and not task.done():
            task.cancel()
        elif main is not None:
            main.cancel()

    for signum in STOPS:
        try:
            loop.add_signal_handler(signum, on_signal, signum)
        except (NotImplementedError, RuntimeError):
            pass
    if text.split(None, 1)[:1] == ["/btw"]:  # a side question: its answer, marked, and nothing else
        return await _side_question(session, printer, agent_id, text.strip())
    try:
        try:
            task = await session.say(agent_id, text)
        except (CommandError, ProviderError, StoreError) as exc:
            printer.error(str(exc))
            return 1
        try:
            ok = bool(await task)
        except asyncio.CancelledError:
            if main is not None and main.cancelling():
                raise
            ok = False
        if stopped:
            return STOPS[stopped[0]]
        await session.wait_idle()  # children it started finish too
        if stopped:
            return STOPS[stopped[0]]
        return 0 if ok else 1
    except asyncio.CancelledError:
        return STOPS[stopped[0]] if stopped else INTERRUPTED
    finally:
        for signum in STOPS:
            try:
                loop.remove_signal_handler(signum)
            except (NotImplementedError, RuntimeError):
                pass


async def _side_question(session, printer, agent_id: str, text: str) -> int:
    """`-p "/btw QUESTION"`: the side answer printed under its mark (core/handlers/btw.py);
    one line and status 1 when the model fails (nothing written)."""
    try:
        result = await session.command(agent_id, text)
    except CommandError as exc:
        printer.error(str(exc))
        return 1
    printer.command(text, list(result.lines))
    return 0
