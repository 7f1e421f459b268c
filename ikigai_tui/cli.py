"""Command line: `ikigai` and `python -m ikigai_tui`.

    ikigai [--db PATH] [--model M] [--api-base URL] [--line]   the full-screen program
    ikigai ... run [--agent A] [--script FILE]                 inputs from a file or stdin
    ikigai ... context [--agent A] [--json]
    ikigai ... agents [--json]
    ikigai ... log [--agent A] [--json]
    ikigai ... export [--agent A] [--format md|json]
    ikigai ... check [--recover OUT]                           integrity, replay, salvage
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from collections.abc import Sequence

from ikigai_tui import __version__
from ikigai_tui.cli_print import silence, error
from ikigai_tui.config import Config, ConfigError, load
from ikigai_tui.core.commands import CommandError
from ikigai_tui.core.provider import ProviderError
from ikigai_tui.core.ports import StoreError

USAGE = 2  # exit status of a usage or configuration error (as argparse's own)


def _global_options(parser: argparse.ArgumentParser, default) -> None:
    parser.add_argument("--db", metavar="PATH", default=default,
                        help="the SQLite database (default: IKIGAI_DB, the config file, or the user data folder)")
    parser.add_argument("--model", metavar="M", default=default,
                        help="model name for this run, e.g. offline, openai/gpt-4o")
    parser.add_argument("--matcher-model", metavar="M", default=default,
                        help="model for /forget and /remember CRITERIA (default: the agent's)")
    parser.add_argument("--api-base", metavar="URL", default=default,
                        help="send provider requests to this base URL")
    parser.add_argument("--config", metavar="FILE", default=default,
                        help="the TOML config file (default: IKIGAI_CONFIG or the user config folder)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ikigai", description="A terminal workbench for long-running LLM conversations.")
    parser.add_argument("--version", action="version", version=f"ikigai {__version__}")
    _global_options(parser, None)
    parser.add_argument("--line", dest="line_mode", action="store_true",
                        help="line mode instead of the full-screen interface")
    # The same options after the subcommand, without overriding ones given before it.
    common = argparse.ArgumentParser(add_help=False)
    _global_options(common, argparse.SUPPRESS)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    run = sub.add_parser("run", parents=[common], help="read inputs (messages, /commands) one per line")
    run.add_argument("--agent", metavar="A", help="agent name or id prefix (default: the root)")
    run.add_argument("--script", metavar="FILE", help="read inputs from FILE instead of stdin")

    ctx = sub.add_parser("context", parents=[common], help="print an agent's context")
    ctx.add_argument("--agent", metavar="A")
    ctx.add_argument("--json", action="store_true", help="one JSON object")

    agents = sub.add_parser("agents", parents=[common], help="print the agent tree")
    agents.add_argument("--json", action="store_true")

    log = sub.add_parser("log", parents=[common], help="print an agent's event log")
    log.add_argument("--agent", metavar="A")
    log.add_argument("--json", action="store_true")

    export = sub.add_parser("export", parents=[common], help="export an agent's conversation")
    export.add_argument("--agent", metavar="A")
    export.add_argument("--format", choices=["md", "json"], default="md")
    export.add_argument("--output", "-o", metavar="FILE",
                        help="write the exact text to FILE (stdout gets control characters "
                             "as visible placeholders)")

    check = sub.add_parser("check", parents=[common],
                           help="check the database (integrity, replay of every agent)")
    check.add_argument("--recover", metavar="OUT",
                       help="save every readable row into a new database OUT")
    return parser


async def _dispatch(args: argparse.Namespace, config: Config) -> int:
    if args.command == "check":
        from ikigai_tui.cli_check import check

        return await check(args, config)
    if args.command == "run" or (args.command is None and args.line_mode):
        from ikigai_tui.cli_run import run

        return await run(args, config, interactive=args.command is None)
    from ikigai_tui import cli_output

    return await cli_output.report(args, config)


def _tui(args: argparse.Namespace, config: Config) -> int:
    from ikigai_tui.tui.app import create_app

    app = create_app(config, model_override=args.model)
    app.run()
    if app.startup_error is not None:
        error(app.startup_error)
        return 1
    return app.return_code or 0


def main(argv: Sequence[str] | None = None) -> int:
    for stream in (sys.stdout, sys.stderr):
        # A text that the terminal's encoding cannot show becomes "?", never a traceback.
        with contextlib.suppress(AttributeError, ValueError):
            stream.reconfigure(errors="replace")
    args = build_parser().parse_args(argv)
    try:
        config = load(db=args.db, model=args.model, api_base=args.api_base,
                      config_path=args.config, matcher_model=args.matcher_model)
        from ikigai_tui.runtime import check_models

        check_models(config)  # every command, the full screen too: before any file is touched
        if args.command is None and not args.line_mode:
            if not sys.stdout.isatty() or not sys.stdin.isatty():
                error("the full-screen interface needs a terminal; use `ikigai run` "
                      "for scripts, or --line for line mode")
                return 1
            return _tui(args, config)
        return asyncio.run(_dispatch(args, config))
    except ConfigError as exc:  # a bad setting or option value: a usage error
        error(str(exc))
        return USAGE
    except (StoreError, CommandError, ProviderError) as exc:
        error(str(exc))
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`ikigai log | head`): not an error of ours. Point stdout
        # at /dev/null so the interpreter's final flush does not complain either.
        silence(sys.stdout)
        return 0
