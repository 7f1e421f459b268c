"""What a /compact summarises: its options, and the context entries they pick.

    /compact [FOCUS] [--keep N] [--upto MARK | --from MARK] [--dry-run]

Options come before or after FOCUS (the rest of the line, taken raw: apostrophes are
prose, not quotes). The latest N turns (default 2) always stay as they are; `--upto MARK`
takes only what lies before the mark, `--from MARK` only what follows it. A tool call and
its result are summarised together or not at all, and a call still waiting for its
result is never summarised.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, NamedTuple

from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.errors import UsageError
from ikigai_tui.core.commands.parse import ArgReader

if TYPE_CHECKING:
    from ikigai_tui.core.replay.replayer import Mark, Replayer

MAX_KEEP = 10_000
MAX_FOCUS = 2_000
_TRAILING = re.compile(r"(?:^|\s)(--dry-run|--(?:keep|upto|from)(?:=|\s+)(\S+))\s*\Z")


class CompactArgs(NamedTuple):
    focus: str | None = None
    keep: int | None = None  # None: the configured default
    upto: str | None = None
    from_: str | None = None
    dry_run: bool = False


def read_compact_args(args: ArgReader) -> CompactArgs:
    found: dict[str, object] = {}
    while (word := args.peek_word()) is not None and word.startswith("--"):
        args.take()
        name, eq, value = word.partition("=")
        valued = bool(eq) or name in ("--keep", "--upto", "--from")
        if valued and not eq:
            value = args.require(f"a value after {name}")
        _option(found, name, value, valued)
    focus = args.rest().strip()
    while (match := _TRAILING.search(focus)) is not None:
        option = match.group(1)
        name, value = (option, "") if option == "--dry-run" else (
            re.match(r"--\w+", option).group(0), match.group(2))  # type: ignore[union-attr]
        _option(found, name, value, name != "--dry-run")
        focus = focus[: match.start()].strip()
    if re.match(r"--\w", focus):
        raise UsageError(f"unexpected option '{focus.split()[0]}'")
    if len(focus) > MAX_FOCUS:
        raise UsageError(f"FOCUS is too long ({len(focus):,} characters, at most {MAX_FOCUS:,})")
    if "upto" in found and "from_" in found:
        raise UsageError("give --upto MARK or --from MARK, not both")
    return CompactArgs(focus or None, found.get("keep"), found.get("upto"),  # type: ignore[arg-type]
                       found.get("from_"), bool(found.get("dry_run")))


def _option(found: dict[str, object], name: str, value: str, valued: bool) -> None:
    key = {"--keep": "keep", "--upto": "upto", "--from": "from_", "--dry-run": "dry_run"}.get(name)
    if key is None or (key == "dry_run") == valued:
        raise UsageError(f"unexpected option '{name}'")
    if key in found:
        raise UsageError(f"{name} is given twice")
    if key == "dry_run":
        found[key] = True
    elif key == "keep":
        if not value.isdigit() or int(value) > MAX_KEEP:
            raise UsageError(f"--keep takes a number of turns from 0 to {MAX_KEEP:,}, not '{value}'")
        found[key] = int(value)
    else:
        if not value:
            raise UsageError(f"{name} needs a mark")
        found[key] = value


def select(r: Replayer, keep: int, upto: Mark | None = None, from_: Mark | None = None) -> list[int]:
    """The context entries to summarise, in context order."""
    keys = list(r.ctx)
    ctx = r.ctx
    users = [n for n, k in enumerate(keys) if ctx[k][1] == "user"]
    if keep <= 0:
        cut = len(keys)
    else:
        cut = users[-keep] if len(users) >= keep else 0
    chosen = keys[:cut]
    if upto is not None:
        chosen = [k for k in chosen if ctx[k][0] <= upto.event_id]
    if from_ is not None:
        chosen = [k for k in chosen if ctx[k][0] > from_.event_id]
    picked = set(chosen)
    for k in chosen:
        kind = ctx[k][1]
        if kind == "tool_call" and r.result_of.get(k) not in ctx:
            picked.discard(k)  # still running, or its result is gone: left alone
        elif kind in ("tool_call", "tool_result") and not r.with_partners({k}) <= set(chosen):
            picked.discard(k)  # its partner stays: the pair stays whole
    return [k for k in chosen if k in picked]


def nothing_to_compact(keep: int, upto: str | None, from_: str | None) -> CommandError:
    if upto is not None or from_ is not None:
        where = f"before '{upto}'" if upto is not None else f"after '{from_}'"
        latest = f" outside the latest {keep} turn{'s' if keep != 1 else ''}" if keep else ""
        return CommandError(f"nothing to compact {where}{latest}")
    if keep:
        return CommandError(f"nothing to compact: the context holds only the latest {keep} "
                            f"turn{'s' if keep != 1 else ''} (--keep {keep}); --keep 0 "
                            "summarises them too")
    return CommandError("nothing to compact: the context is empty")
