"""Command line: `ikigai` and `python -m ikigai_tui`.

    ikigai [--db PATH] [--model M] [--api-base URL] [--line]   the full-screen program
    ikigai ... -p PROMPT [--agent A] [--output-format F]       one message, its reply, exit
    ikigai ... ask PROMPT... [--agent A] [--output-format F]   the same
    ikigai ... run [--agent A] [--script FILE] [--output-format F]   inputs from a file or stdin
    ikigai ... context [--agent A] [--json]
    ikigai ... agents [--json]
    ikigai ... log [--agent A] [--json]
    ikigai ... export [--agent A] [--format md|json] [--inherited] [--output FILE]
    ikigai ... check [--recover OUT]                           integrity, replay, salvage
    ikigai copy SRC DST [--replace]                            a whole log to another database
    ikigai paths                                               where files are kept
    ikigai completion bash|zsh|fish                            a shell completion script
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from collections.abc import Sequence

from ikigai_tui import __version__
from ikigai_tui.cli.print_mode import silence, error
from ikigai_tui.config import Config, ConfigError, load
from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.provider import ProviderError
from ikigai_tui.core.ports import CannotOpen, StoreError

USAGE = 2  # exit status of a usage or configuration error (as argparse's own)
FORMATS = ("text", "json", "stream-json")

# What exit status 1 means, command by command (None: the command never exits 1).
TURN_FAILED = "a failed turn or input (the provider failed, a command was refused)"
FAILED = {
    "": TURN_FAILED, "ask": TURN_FAILED, "run": TURN_FAILED,
    "context": "the database or the agent could not be read (no database, no such agent)",
    "agents": "the database could not be read (no database, a damaged one)",
    "log": "the database or the agent could not be read (no database, no such agent)",
    "export": "the database or the agent could not be read, or FILE could not be written",
    "check": "the database is damaged (each problem is listed) or could not be opened",
    "copy": "the copy does not replay as SRC does (each difference is listed), or it failed",
    "paths": None,
    "completion": None,
}
TURNS = ("", "ask", "run")  # the commands that keep a reply in progress when stopped


def exit_codes(name: str) -> str:
    """The `exit status:` section of the help of `ikigai` (name "") or of a command."""
    lines = ["exit status:", "  0    success"]
    if FAILED[name]:
        lines.append(f"  1    {FAILED[name]}")
    lines.append("  2    a usage or configuration error (nothing was written)")
    if name in TURNS:
        lines += ["  130  interrupted (Ctrl-C; a reply in progress is kept, flagged interrupted);",
                  "       143, 129: ended by SIGTERM, SIGHUP (the same)"]
    elif name != "completion":
        lines.append("  130  interrupted (Ctrl-C)")
    return "\n".join(lines) + "\n"


def epilog(name: str) -> str:
    """The examples, then the exit statuses, of `ikigai` (name "") or of a command; for
    `ikigai`, then where the manual is."""
    return EXAMPLES[name] + "\n" + exit_codes(name) + ("" if name else "\n" + DOCS)


DOCS = """more: README.md, then docs/ in the source tree (a page per subject: commands,
  configuration, headless use, the window, ...)
"""


EXAMPLES = {
    "": """examples:
  ikigai                                   the full screen
  ikigai -p "summarise RFC 2119"           one message, its reply, exit
  ikigai --model gpt-4o -p "hi" --output-format json
  ikigai --model fast -p "hi"              fast: an [aliases] entry of the config
  ikigai run --script session.txt          messages and /commands, one per line
  ikigai paths                             where the config, database and logs are
""",
    "ask": """examples:
  ikigai ask what is a monad
  ikigai ask --agent research --output-format stream-json "go on"
  echo "a long prompt" | ikigai ask -
""",
    "run": r"""examples:
  printf 'hello\n/mark A\n/context\n' | ikigai run
  ikigai --db /tmp/demo.db run --script session.txt --output-format stream-json
""",
    "context": "examples:\n  ikigai context --agent research --json | jq .tokens\n",
    "agents": "examples:\n  ikigai agents\n  ikigai agents --json | jq '.[].name'\n",
    "log": "examples:\n  ikigai log --agent root | less\n",
    "export": """examples:
  ikigai export --agent root --format md -o root.md
  ikigai export --agent kid --inherited     a forked agent, with what it inherited
""",
    "check": "examples:\n  ikigai --db broken.db check --recover saved.db\n",
    "copy": """what is copied: the agents, every event (its id, payload and time unchanged)
  and the token factors; kept token counts and message vectors are not (they are
  recomputed when needed). DST must hold no log. Copy a log that no ikigai is writing
  to. A progress bar is shown on a terminal; every agent is then replayed on both
  sides and compared.

examples:
  ikigai copy ~/.local/share/ikigai/ikigai.db postgresql://me@db.example/ikigai
  ikigai copy 'postgresql://me@db.example/ikigai?schema=team' team.db
  ikigai copy old.db new.db --replace       new.db is moved to new.db.bak-TIME first
""",
    "paths": "examples:\n  ikigai paths\n  ikigai paths --json\n",
    "completion": """examples:
  source <(ikigai completion bash)                 in ~/.bashrc
  ikigai completion zsh > ~/.zfunc/_ikigai         with ~/.zfunc in $fpath
  ikigai completion fish > ~/.config/fish/completions/ikigai.fish
""",
}


def _sub(sub, name: str, help: str, **kwargs) -> argparse.ArgumentParser:
    return sub.add_parser(name, help=help, description=help[:1].upper() + help[1:] + ".",
                          epilog=epilog(name),
                          formatter_class=argparse.RawDescriptionHelpFormatter, **kwargs)


def _output_format(parser: argparse.ArgumentParser, default=argparse.SUPPRESS) -> None:
    # SUPPRESS after a subcommand: `ikigai --output-format json run` is not undone by
    # the subcommand's own default.
    parser.add_argument("--output-format", choices=FORMATS, default=default, metavar="FORMAT",
                        help="text (default), json (one object at the end) or stream-json "
                             "(one object per line as things happen)")


def _global_options(parser: argparse.ArgumentParser, default, *, store_only: bool = False) -> None:
    """The options of every command; `store_only`: those of a command that only reads
    the database (which database, the config that may name it)."""
    parser.add_argument("--db", metavar="PATH", default=default,
                        help="the SQLite database (default: IKIGAI_DB, the config file, or the user data folder)")
    if store_only:
        _config_option(parser, default)
        return
    parser.add_argument("--model", metavar="M", default=default,
                        help="model for this run: offline, gpt-4o, anthropic/claude-sonnet-4-5, an alias ...")
    parser.add_argument("--matcher-model", metavar="M", default=default,
                        help="model for /forget and /remember CRITERIA (default: the agent's)")
    parser.add_argument("--api-base", metavar="URL", default=default,
                        help="send provider requests to this base URL")
    parser.add_argument("--cwd", metavar="PATH", default=default,
                        help="the root agent's workspace, the folder its file tools work in "
                             "(default: the folder ikigai is started in; recorded, see /cwd)")
    _config_option(parser, default)
    parser.add_argument("--debug", action="store_true", default=default,
                        help="write a diagnostic log (timings, sizes, retries, errors; no "
                             "message text, no keys) under the user log folder")
    parser.add_argument("--debug-content", action="store_true", default=default,
                        help="--debug, and the log holds message text too")


def _permission_options(parser: argparse.ArgumentParser, default) -> None:
    """--allow and --yes: who answers a tool's `ask` without a screen (`run`, `-p`)."""
    parser.add_argument("--allow", metavar="TOOL", action="append", default=default,
                        help="let the LLM run TOOL where the permission rules ask "
                             "(repeatable; patterns like 'mcp.github__*' allowed; without "
                             "it such calls are refused)")
    parser.add_argument("--yes", action="store_true", default=default,
                        help="allow every tool call the permission rules ask about, and "
                             'accept the LLM\'s memory changes when memory_writes = "ask" '
                             "and the changes of its context it asks for when "
                             'llm_context_changes = "ask" (each is printed)')


def _config_option(parser: argparse.ArgumentParser, default) -> None:
    parser.add_argument("--config", metavar="FILE", default=default,
                        help="the TOML config file (default: IKIGAI_CONFIG or the user config folder)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ikigai", description="A terminal workbench for long-running LLM conversations.",
        epilog=epilog(""), formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"ikigai {__version__}")
    _global_options(parser, None)
    parser.add_argument("--line", dest="line_mode", action="store_true",
                        help="line mode instead of the full-screen interface")
    parser.add_argument("-p", "--prompt", metavar="PROMPT",
                        help="send PROMPT to the agent, print the reply and exit ('-': read it from stdin)")
    parser.add_argument("--agent", dest="prompt_agent", metavar="A",
                        help="with -p: the agent (name or id prefix; default: the root)")
    _output_format(parser, None)
    _permission_options(parser, None)
    # The same options after the subcommand, without overriding ones given before it.
    common = argparse.ArgumentParser(add_help=False)
    _global_options(common, argparse.SUPPRESS)
    store = argparse.ArgumentParser(add_help=False)  # for a command that only reads the log
    _global_options(store, argparse.SUPPRESS, store_only=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    ask = _sub(sub, "ask", "send one message, print the reply and exit", parents=[common])
    ask.add_argument("prompt", nargs="*", metavar="PROMPT",
                     help="the message (words are joined by spaces; '-': read it from stdin)")
    ask.add_argument("--agent", metavar="A", help="agent name or id prefix (default: the root)")
    _output_format(ask)
    _permission_options(ask, argparse.SUPPRESS)

    run = _sub(sub, "run", "read inputs (messages, /commands) one per line", parents=[common])
    run.add_argument("--agent", metavar="A", help="agent name or id prefix (default: the root)")
    run.add_argument("--script", metavar="FILE", help="read inputs from FILE instead of stdin")
    _output_format(run)
    _permission_options(run, argparse.SUPPRESS)

    ctx = _sub(sub, "context", "print an agent's context", parents=[common])
    ctx.add_argument("--agent", metavar="A")
    ctx.add_argument("--json", action="store_true", help="one JSON object")

    agents = _sub(sub, "agents", "print the agent tree", parents=[common])
    agents.add_argument("--json", action="store_true")

    log = _sub(sub, "log", "print an agent's event log", parents=[common])
    log.add_argument("--agent", metavar="A")
    log.add_argument("--json", action="store_true")

    export = _sub(sub, "export", "export an agent's conversation", parents=[store])
    export.add_argument("--agent", metavar="A",
                        help="the agent: a name or an id prefix (default: the root)")
    export.add_argument("--format", choices=["md", "json"], default="md",
                        help="md: Markdown, to read (the default); json: every event, as data")
    export.add_argument("--inherited", action="store_true",
                        help="a forked agent: include the messages it inherited from its "
                             "parent (without it, only their number is given, at the top)")
    export.add_argument("--output", "-o", metavar="FILE",
                        help="write the exact text to FILE (stdout gets control characters "
                             "as visible placeholders)")

    check = _sub(sub, "check", "check the database (integrity, replay of every agent)",
                 parents=[common])
    check.add_argument("--recover", metavar="OUT",
                       help="save every readable row into a new database OUT")

    copy = _sub(sub, "copy", "copy a whole log to another database (SQLite or PostgreSQL), "
                "then check that every agent replays the same")
    copy.add_argument("src", metavar="SRC", help="the log: a SQLite file or a postgresql:// URL")
    copy.add_argument("dst", metavar="DST",
                      help="where to: a new SQLite file or an empty PostgreSQL schema")
    copy.add_argument("--replace", action="store_true",
                      help="a SQLite DST that holds a log is moved aside to DST.bak-TIME "
                           "first (a PostgreSQL one never is: give a new ?schema=NAME)")

    paths = _sub(sub, "paths", "print where the config file, database, memories and logs are",
                 parents=[common])
    paths.add_argument("--json", action="store_true", help="one JSON object")

    completion = _sub(sub, "completion", "print a shell completion script")
    completion.add_argument("shell", choices=["bash", "zsh", "fish"], metavar="SHELL",
                            help="bash, zsh or fish")
    return parser


async def _dispatch(args: argparse.Namespace, config: Config) -> int:
    if args.command == "ask" or (args.command is None and args.prompt is not None):
        from ikigai_tui.cli.ask import ask

        return await ask(args, config)
    if args.command == "check":
        from ikigai_tui.cli.check import check

        return await check(args, config)
    if args.command == "run" or (args.command is None and args.line_mode):
        from ikigai_tui.cli.run import run

        return await run(args, config, interactive=args.command is None)
    from ikigai_tui.cli import output as cli_output

    return await cli_output.report(args, config)


def _tui(args: argparse.Namespace, config: Config) -> int:
    from ikigai_tui.runtime import create_app, reachable

    if config.db_is_url:  # a server that cannot be reached: one line, before the screen
        asyncio.run(reachable(config))

    app = create_app(config, model_override=args.model)
    app.run()
    if app.crash is not None:
        what, path = app.crash
        error(f"internal error ({what}); the traceback is in {path}")
    if app.startup_error is not None:
        error(app.startup_error)
        return 1
    return app.return_code or 0


def _misplaced(args: argparse.Namespace) -> str | None:
    """Options of the one-shot mode given where they mean nothing."""
    if args.prompt is not None and args.command not in (None, "ask"):
        return f"-p is a mode of its own: it is not used with `{args.command}`"
    if args.command is None and args.prompt is None:
        if args.prompt_agent is not None:
            return "--agent goes with -p PROMPT (or after a command: `ikigai run --agent A`)"
        if args.output_format is not None:
            return "--output-format goes with -p PROMPT, `ask` or `run`"
        if (args.allow is not None or args.yes) and not args.line_mode:
            flag = "--allow" if args.allow is not None else "--yes"
            return (f"{flag} goes with -p PROMPT, `ask` or `run` (the full screen asks "
                    "in a dialog)")
    if args.command is None and args.prompt is not None:
        args.agent = args.prompt_agent
    return None


def main(argv: Sequence[str] | None = None) -> int:
    for stream in (sys.stdout, sys.stderr):
        # A text that the terminal's encoding cannot show becomes "?", never a traceback.
        with contextlib.suppress(AttributeError, ValueError):
            stream.reconfigure(errors="replace")
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "completion":
        from ikigai_tui.cli.completion import script

        sys.stdout.write(script(args.shell, parser))
        return 0
    problem = _misplaced(args)
    if problem:
        error(problem)
        return USAGE
    from ikigai_tui.support import diagnostics

    diagnostics.start(debug=bool(args.debug or args.debug_content), content=bool(args.debug_content),
                      command=args.command)
    try:
        if args.command == "copy":  # two databases named: no config, no --db
            from ikigai_tui.cli.copy import copy

            return asyncio.run(copy(args))
        config = load(db=args.db, model=args.model, api_base=args.api_base,
                      config_path=args.config, matcher_model=args.matcher_model,
                      cwd=args.cwd)
        from ikigai_tui.runtime import check_models

        check_models(config)  # every command, the full screen too: before any file is touched
        if args.command == "paths":
            from ikigai_tui.cli.paths import paths

            return paths(config, as_json=args.json)
        if args.command is None and not args.line_mode and args.prompt is None:
            if not sys.stdout.isatty() or not sys.stdin.isatty():
                error("the full-screen interface needs a terminal; use `ikigai run` "
                      "for scripts, or --line for line mode")
                return 1
            return _tui(args, config)
        return asyncio.run(_dispatch(args, config))
    except (ConfigError, CannotOpen) as exc:  # a bad setting, option or database: usage
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
    except Exception as exc:  # a defect of ours: one line here, the traceback in the log
        path = diagnostics.exception(f"ikigai {args.command or ''}".strip(), exc)
        error(f"internal error ({type(exc).__name__}: {exc}); the traceback is in {path}")
        return 1
