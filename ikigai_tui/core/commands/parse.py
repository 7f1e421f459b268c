"""Slash-command parsing: one parser for the keyboard, scripts and the LLM's `slash` tool.

Arguments split like a shell (quotes group words). Free text at the end of a command
(a fork prompt, a mail, a system prompt) is taken raw, so an apostrophe in prose is
not a syntax error.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple

from ikigai_tui.core.errors import CommandError, UsageError

_SPACE = " \t\r\n"


def _scan(text: str, pos: int) -> tuple[str, int] | None:
    """The next shell-like token at or after pos: (token, end), or None at the end."""
    n = len(text)
    while pos < n and text[pos] in _SPACE:
        pos += 1
    if pos >= n:
        return None
    out: list[str] = []
    while pos < n and text[pos] not in _SPACE:
        ch = text[pos]
        if ch == "'":
            end = text.find("'", pos + 1)
            if end < 0:
                raise UsageError("unbalanced quote (')")
            out.append(text[pos + 1 : end])
            pos = end + 1
        elif ch == '"':
            pos += 1
            while True:
                if pos >= n:
                    raise UsageError('unbalanced quote (")')
                ch = text[pos]
                if ch == '"':
                    pos += 1
                    break
                if ch == "\\" and pos + 1 < n and text[pos + 1] in '"\\':
                    pos += 1
                    ch = text[pos]
                out.append(ch)
                pos += 1
        elif ch == "\\" and pos + 1 < n:
            out.append(text[pos + 1])
            pos += 2
        else:
            out.append(ch)
            pos += 1
    return "".join(out), pos


class ArgReader:
    """Reads a command's arguments token by token, or the raw remainder as free text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def peek(self) -> str | None:
        found = _scan(self.text, self.pos)
        return None if found is None else found[0]

    def peek_word(self) -> str | None:
        """The next token if it scans cleanly; None at the end or where free text begins
        (an apostrophe in prose is not an unbalanced quote)."""
        try:
            return self.peek()
        except UsageError:
            return None

    def take(self) -> str | None:
        found = _scan(self.text, self.pos)
        if found is None:
            return None
        token, self.pos = found
        return token

    def require(self, what: str) -> str:
        token = self.take()
        if token is None or token == "":
            raise UsageError(f"missing {what}")
        return token

    def rest(self) -> str:
        """The remaining text; a single quoted token is unquoted, anything else kept raw."""
        raw = self.text[self.pos :].strip()
        self.pos = len(self.text)
        if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
            try:
                found = _scan(raw, 0)
            except UsageError:
                return raw
            if found is not None and found[1] == len(raw):
                return found[0]
        return raw

    def done(self) -> None:
        token = self.take()
        if token is not None:
            raise UsageError(f"unexpected argument '{token}'")


# A handler takes a CommandContext (core/commands/context.py), fills its batch and returns
# its CommandResult, or returns a Proposal that a reviewer answers before anything is
# written (core/commands/proposals.py). Only the bus calls it (core/commands/bus.py): the parser
# names neither type, else the command path's modules would import each other in a circle.
Handler = Callable[[Any], Awaitable[Any]]


class CommandSpec(NamedTuple):
    name: str
    usage: str
    summary: str
    handler: Handler
    llm: bool = False  # offered to the LLM through the `slash` tool
    deferred: bool = False  # from the LLM mid-turn: applied when the turn ends
    details: str = ""


class CommandResult(NamedTuple):
    lines: list[str] | tuple[()] = ()
    exit: bool = False
    data: Any = None


class ParsedCommand(NamedTuple):
    spec: CommandSpec
    args: str
    text: str


class Registry:
    def __init__(self, specs: list[CommandSpec]) -> None:
        self.specs = {s.name: s for s in specs}

    def __iter__(self):
        return iter(self.specs.values())

    def get(self, name: str) -> CommandSpec | None:
        return self.specs.get(name)

    def llm_names(self) -> list[str]:
        return [s.name for s in self.specs.values() if s.llm]

    def parse(self, text: str) -> ParsedCommand:
        stripped = text.strip()
        match = re.match(r"/([^\s]*)\s*(.*)\Z", stripped, re.S)
        if match is None:
            raise CommandError("a command starts with '/'. Type /help for the list.")
        name, args = match.group(1), match.group(2)
        spec = self.specs.get(name)
        if spec is None:
            shown = f"/{name}" if name else "/"
            raise CommandError(f"unknown command '{shown}'. Type /help for the list.")
        return ParsedCommand(spec, args, stripped)


_ID_LIST = re.compile(r"^\d+(-\d+)?(,\d+(-\d+)?)*$")


class IdRange(NamedTuple):
    """One part of an id list: a single id (lo == hi) or a range."""

    lo: int
    hi: int

    @property
    def single(self) -> bool:
        return self.lo == self.hi

    def __str__(self) -> str:
        return str(self.lo) if self.single else f"{self.lo}-{self.hi}"


def parse_id_ranges(text: str) -> list[IdRange]:
    """`3,5-9` -> [3, 5-9], never expanded: a range stands for the ids that exist in it."""
    compact = text.replace(" ", "")
    if not _ID_LIST.match(compact):
        raise UsageError(f"'{text}' is not a list of message ids like 3,5-9")
    ranges = []
    for part in compact.split(","):
        lo, _, hi = part.partition("-")
        start, end = int(lo), int(hi or lo)
        if end < start:
            raise UsageError(f"range '{part}' runs backwards")
        ranges.append(IdRange(start, end))
    return ranges


def parse_id_list(text: str, limit: int = 1_000_000) -> list[int]:
    """`3,5-9` -> [3, 5, 6, 7, 8, 9]."""
    ids: list[int] = []
    for part in parse_id_ranges(text):
        if part.hi - part.lo + 1 + len(ids) > limit:
            raise UsageError(f"too many ids (at most {limit})")
        ids.extend(range(part.lo, part.hi + 1))
    return list(dict.fromkeys(ids))


_MARK_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,63}$")


def is_mark_name(name: str) -> bool:
    return _MARK_NAME.match(name) is not None


def check_mark_name(name: str) -> str:
    if not _MARK_NAME.match(name):
        raise UsageError(
            f"'{name}' is not a valid mark name (letters, digits, _ . : -, at most 64)"
        )
    return name
