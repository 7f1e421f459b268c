"""Read-only questions about a replayed context (core/replay/replayer.py): its messages, marks,
what a filter would remove, what took a message out and in what words, and what a child
inherits at fork. `Replayer` builds the state; `ReplayQueries` only reads it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import NamedTuple

from ikigai_tui.core.events import CONTEXT_MESSAGE_KINDS, EventRow
from ikigai_tui.core.replay.context import Context
from ikigai_tui.core.replay.rows import Entry, Rows
from ikigai_tui.support.inert import sanitize


class Mark(NamedTuple):
    name: str | None  # None for an unnamed mark
    event_id: int  # the mark event: messages with a larger seq came after it

    @property
    def label(self) -> str:
        return self.name if self.name is not None else f"#{self.event_id}"


class Entries:
    """A fork snapshot's context entries (Snapshot, below), frozen: a Context
    that iterates `(key, entry)` pairs, as the tuple of pairs it replaces did."""

    __slots__ = ("_ctx",)

    def __init__(self, ctx: Context | None = None) -> None:
        self._ctx = ctx if ctx is not None else Context()

    def __iter__(self) -> Iterator[tuple[int, Entry]]:
        return iter(self._ctx.items())

    def __len__(self) -> int:
        return len(self._ctx)

    def __bool__(self) -> bool:
        return bool(self._ctx)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Entries):
            return len(self) == len(other) and list(self) == list(other)
        if isinstance(other, tuple):
            return tuple(self) == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def get(self, key: int) -> Entry | None:
        return self._ctx.get(key)

    def keys_of_kind(self, kind: str) -> list[int]:
        return self._ctx.keys_of_kind(kind)

    def context(self) -> Context:
        """A Context of these entries to change (a copy: O(n) in C)."""
        return self._ctx.copy()

    def __repr__(self) -> str:
        return f"Entries({list(self)!r})"


@dataclass(frozen=True)
class Snapshot:
    """What a child inherits at fork: the parent's context and settings at that moment."""

    # (key, entry) pairs in context order, held as a Context (~18 bytes a message).
    entries: Entries = field(default_factory=Entries)
    system: str | None = None
    pins: tuple[str, ...] = ()
    model: str | None = None
    budget: int | None = None
    result_of: dict[int, int] = field(default_factory=dict)
    # The permission rules granted in the lineage up to the fork, (tool, rule) in log
    # order: the child's ceiling (core/tools/permissions.py).
    granted: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None  # the workspace (None: the session's default)
    # The tool results whose text is cleared (their entries carry the stub): inherited.
    cleared: frozenset[int] = frozenset()


EMPTY = Snapshot()


class ReplayQueries:
    """The reading side of `Replayer` (the attributes are the replayer's)."""

    ctx: Context
    summaries: set[int]
    result_of: dict[int, int]
    removed: dict[int, int]
    history: Rows
    marks: dict[object, Mark]
    ops: list[int]
    undone: set[int]
    system: str | None
    pins: list[str]
    model: str | None
    budget: int | None
    granted: list[tuple[str, str]]
    cwd: str | None
    cleared: dict[int, int]
    base: Snapshot

    def messages(self) -> list[tuple[int, str, dict]]:
        """The context in order: (id, kind, payload); kind may be `summary`."""
        return [(k, e[1], e[2]) for k, e in self.ctx.items()]

    def __len__(self) -> int:
        return len(self.ctx)

    def last_kind(self) -> str | None:
        if not self.ctx:
            return None
        return self.ctx[next(reversed(self.ctx))][1]

    def filter_removes(self, mode: str, ids) -> set[int]:
        """The context entries a filter of `mode` over `ids` removes (partners included)."""
        ctx = self.ctx
        if mode == "remember":
            keep = set(ids)
            drop = {i for i in ctx if i not in keep}
        elif mode == "forget":
            drop = {i for i in ids if i in ctx}
        else:
            return set()
        return self.with_partners(drop)

    def with_partners(self, ids: set[int]) -> set[int]:
        """`ids` plus the tool call or result partner of each one still in the context."""
        ctx = self.ctx
        out = set(ids)
        for i in ids:
            entry = ctx[i]
            if entry[1] == "tool_result":
                partner = entry[2].get("call_event")
            elif entry[1] == "tool_call":
                partner = self.result_of.get(i)
            else:
                continue
            if partner in ctx:
                out.add(partner)
        return out

    def own_row(self, key: int) -> EventRow | None:
        """This agent's own event `key`, from its history (O(log n))."""
        return self.history.find(key)

    def message_row(self, key: int) -> EventRow | None:
        """The message `key` as replay knows it, in the context or not: one of this
        agent's own, or one it inherited at fork. None for another event or a message
        it never had (an ancestor's from before a fork's mark, say)."""
        row = self.own_row(key)
        if row is not None:
            return row if row[1] in CONTEXT_MESSAGE_KINDS else None
        entry = self.base.entries.get(key)
        return entry if entry is not None and entry[1] in CONTEXT_MESSAGE_KINDS else None

    def removal(self, key: int) -> EventRow | None:
        """The event that took the message `key` out of the context: a clear, rewind or
        filter; a compact while its summary is in the context (past it, what removed the
        summary). None while the message is in the context, or if it never was."""
        if key in self.ctx:
            return None
        op = self.removed.get(key)
        while op is not None:
            row = self.own_row(op)
            if row is None:
                return None
            if row[1] != "compact" or op in self.ctx:
                return row
            op = self.removed.get(op)  # the summary went too: what removed it
        return None

    def valid_marks(self) -> list[Mark]:
        return list(self.marks.values())

    def find_mark(self, name: str) -> Mark | None:
        return self.marks.get(name)

    def latest_mark(self) -> Mark | None:
        if not self.marks:
            return None
        return self.marks[next(reversed(self.marks))]

    def mark_position(self, mark: Mark) -> int:
        """How many context entries lie at or before the mark."""
        return sum(1 for e in self.ctx.values() if e[0] <= mark.event_id)

    def undo_target(self) -> int | None:
        """The latest context change (clear, rewind, filter, compact, pin, unpin, budget)
        not yet undone."""
        for op in reversed(self.ops):
            if op not in self.undone:
                return op
        return None

    def snapshot(self, after_mark: int | None = None, upto: int | None = None) -> Snapshot:
        """The state a child inherits: whole, or only the messages after a mark, and up
        to and including the entry `upto` (/fork --at: see `cut_at`)."""
        entries = self.ctx.after(after_mark)  # the whole context, or what came after the mark
        if upto is not None and upto in entries:
            cut_at(entries, upto, self.result_of)
        present = set(entries)
        if after_mark is not None:
            # A mark set between a tool call and its result must not hand the child a
            # result without its call.
            for key in entries.keys_of_kind("tool_result"):
                if entries[key][2].get("call_event") not in present:
                    del entries[key]
                    present.discard(key)
        result_of = {c: r for c, r in self.result_of.items() if c in present and r in present}
        return Snapshot(Entries(entries), self.system, tuple(self.pins), self.model, self.budget,
                        result_of, granted=(*self.base.granted, *self.granted),
                        cwd=self.cwd, cleared=frozenset(k for k in self.cleared if k in present))


def cut_at(ctx: Context, key: int, result_of: dict[int, int]) -> None:
    """Keep in `ctx` the entries up to and including `key` (in context order), and the
    result of every tool call kept, even when it comes later: a call is never sent
    without its result (a result never comes before its call)."""
    seq = ctx[key][0]
    results = [(r, ctx[r]) for c in ctx.keys_of_kind("tool_call")
               if ctx[c][0] <= seq and (r := result_of.get(c)) in ctx and ctx[r][0] > seq]
    ctx.cut_after(seq)
    if results:
        ctx.insert_sorted(sorted(results))


def mark_seq(ctx: Context, key: int, result_of: dict[int, int]) -> int:
    """The seq a mark placed at the context entry `key` (/mark --at) rewinds to: the
    entry's own; a summary's last message; a tool call's result when it comes later (a
    rewind there keeps the call with its result)."""
    seq, kind, payload = ctx[key]
    if kind == "summary":
        return int(payload.get("max_seq", seq))
    result = result_of.get(key) if kind == "tool_call" else None
    if result in ctx and ctx[result][0] > seq:
        return ctx[result][0]
    return seq


def removal_label(kind: str, payload: dict) -> str:
    """Why a message is out of the context, in a few words, from the event that took it
    out (a clear, rewind, filter or compact): the words of the scrollback's dimmed marks
    and of /recall's states. Made safe here (a command's text is quoted)."""
    if kind == "clear":
        return "cleared"
    if kind == "rewind":
        name = payload.get("mark")
        return f"rewound to '{_short(str(name))}'" if name else "rewound to an earlier mark"
    if kind == "filter":
        remember = payload.get("mode") == "remember"
        command = str(payload.get("command") or "").strip()
        by = f'"{_short(command)}"' if command else ("/remember" if remember else "/forget")
        return f"left out by {by}" if remember else f"forgotten by {by}"
    if kind == "compact":
        return "summarised"
    return "taken out"


def _short(text: str, most: int = 40) -> str:
    text = " ".join(sanitize(text).split())
    return text if len(text) <= most else text[: most - 1] + "…"
