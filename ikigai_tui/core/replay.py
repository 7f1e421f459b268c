"""Pure replay: an agent's events -> its context (SPEC §4).

The context is an insertion-ordered dict `id -> entry`, kept in log order. An entry is
`(seq, kind, payload)`: a message's entry is its event row itself (seq == id), a
compaction summary's seq is that of the first message it replaced. Because the dict is
in seq order, a rewind pops from the tail and touches only what it removes, and an
append is O(1), so replaying N events costs O(N) and appending one event costs O(1).

`Replayer.from_rows` is the one-shot replay used when an agent is opened;
`Replayer.apply` is the incremental step used as events are committed. Both run the same
per-event code; the property tests check that they always agree.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable
from dataclasses import dataclass, field
from operator import itemgetter
from typing import NamedTuple

from ikigai_tui.core.events import CONTEXT_MESSAGE_KINDS, UNDOABLE_KINDS, EventRow

Entry = tuple[int, str, dict]


class Mark(NamedTuple):
    name: str | None  # None for an unnamed mark
    event_id: int  # the mark event: messages with a larger seq came after it

    @property
    def label(self) -> str:
        return self.name if self.name is not None else f"#{self.event_id}"


@dataclass(frozen=True)
class Snapshot:
    """What a child inherits at fork: the parent's context and settings at that moment."""

    entries: tuple[tuple[int, Entry], ...] = ()
    system: str | None = None
    pins: tuple[str, ...] = ()
    model: str | None = None
    budget: int | None = None
    result_of: dict[int, int] = field(default_factory=dict)


EMPTY = Snapshot()


class Replayer:
    """The replayed state of one agent: context, marks, settings, mailbox."""

    def __init__(self, base: Snapshot = EMPTY) -> None:
        self.base = base
        self.history: list[EventRow] = []  # this agent's own events, for /undo
        self.undone: set[int] = set()
        self.ops: list[int] = []  # undoable events in log order
        self.mark_names_seen: set[str] = set()
        self.dead = False
        self._reset()

    def _reset(self) -> None:
        # Bumped by every change other than an append, so an incremental reader (the
        # token meter) knows when it must recount from the start.
        self.changes = getattr(self, "changes", 0) + 1
        base = self.base
        self.ctx: dict[int, Entry] = dict(base.entries)
        self.summaries: set[int] = {k for k, e in base.entries if e[1] == "summary"}
        self.result_of: dict[int, int] = dict(base.result_of)
        self.marks: dict[object, Mark] = {}
        self.system = base.system
        self.pins: list[str] = list(base.pins)
        self.model = base.model
        self.budget = base.budget
        self.budget_event: int | None = None  # the /budget in effect, if any
        self.unread: dict[int, dict] = {}
        # Context key -> the event (clear, rewind, filter, compact) that took it out; a
        # key leaves at most once between resets, so keeping this costs O(1) per entry.
        self.removed: dict[int, int] = {}

    # -- building --------------------------------------------------------------

    @classmethod
    def from_rows(cls, rows: list[EventRow], base: Snapshot = EMPTY) -> Replayer:
        """Replay a whole log in one pass (undo targets are collected first).

        Takes ownership of `rows`: it becomes the history later `apply` calls extend.
        """
        return cls.undoing(rows, base, set())

    @classmethod
    def undoing(cls, rows: list[EventRow], base: Snapshot, undone: set[int]) -> Replayer:
        """The state of `rows` with the events `undone` undone (and those the rows undo):
        what an /undo would leave. Takes ownership of `rows` and `undone`."""
        r = cls(base)
        r.undone = undone
        ops = r.ops
        for row in rows:
            kind = row[1]
            if kind in UNDOABLE_KINDS:
                ops.append(row[0])
            elif kind == "undo":
                undone.add(row[2]["target"])
        r.history = rows
        r._replay(rows)
        return r

    def apply(self, row: EventRow) -> None:
        """Incremental step: the state after one more committed event."""
        self.history.append(row)
        kind = row[1]
        if kind in UNDOABLE_KINDS:
            self.ops.append(row[0])
        elif kind == "undo":
            self.undone.add(row[2]["target"])
            self._reset()
            self._replay(self.history)
            return
        self._replay((row,))

    def apply_many(self, rows: Iterable[EventRow]) -> None:
        for row in rows:
            self.apply(row)

    def _replay(self, rows: Iterable[EventRow]) -> None:
        ctx = self.ctx
        message_kinds = CONTEXT_MESSAGE_KINDS
        undone = self.undone
        handlers = _HANDLERS
        for row in rows:
            kind = row[1]
            if kind in message_kinds:
                ctx[row[0]] = row
                if kind == "tool_result":
                    self.result_of[row[2].get("call_event")] = row[0]
            elif row[0] not in undone:
                handler = handlers.get(kind)
                if handler is not None:
                    handler(self, row)

    # -- event handlers --------------------------------------------------------

    def _on_clear(self, row: EventRow) -> None:
        self.changes += 1
        self.removed.update(dict.fromkeys(self.ctx, row[0]))
        self.ctx.clear()
        self.summaries.clear()
        self.marks.clear()

    def _on_mark(self, row: EventRow) -> None:
        name = row[2].get("name")
        key: object = name if name is not None else ("#", row[0])
        if name is not None:
            self.mark_names_seen.add(name)
        self.marks.pop(key, None)  # re-using a name moves the mark
        self.marks[key] = Mark(name, row[0])

    def _on_rewind(self, row: EventRow) -> None:
        target = row[2]["mark_event"]
        keys = list(self.marks)
        for i, key in enumerate(keys):
            if self.marks[key].event_id == target:
                for later in keys[i + 1 :]:
                    del self.marks[later]
                break
        else:
            return  # the mark is not valid here: nothing to rewind to
        self._truncate_after(target, row[0])

    def _truncate_after(self, seq: int, by: int) -> None:
        self.changes += 1
        ctx = self.ctx
        removed = self.removed
        removed_results = []
        while ctx:
            # popitem, not del + next(reversed()): deleting leaves holes that every later
            # reversed() walks over, which made a long rewind quadratic.
            last, entry = ctx.popitem()
            if entry[0] <= seq:
                ctx[last] = entry
                break
            removed[last] = by
            if entry[1] == "tool_result":
                removed_results.append(entry)
            elif entry[1] == "summary":
                self.summaries.discard(last)
        # A summary that covers anything after the mark goes too.
        for sid in [s for s in self.summaries if ctx[s][2]["max_seq"] > seq]:
            del ctx[sid]
            self.summaries.discard(sid)
            removed[sid] = by
        # A mark set between a tool call and its result must not leave the call orphaned.
        for entry in removed_results:
            call = entry[2].get("call_event")
            if call in ctx:
                del ctx[call]
                removed[call] = by

    def _on_filter(self, row: EventRow) -> None:
        self.changes += 1
        payload = row[2]
        ctx = self.ctx
        for i in self.filter_removes(payload["mode"], payload["ids"]):
            del ctx[i]
            self.summaries.discard(i)
            self.removed[i] = row[0]

    def _on_compact(self, row: EventRow) -> None:
        self.changes += 1
        payload = row[2]
        ctx = self.ctx
        replaced = self.with_partners({i for i in payload["ids"] if i in ctx})
        if not replaced:
            return
        max_seq = max(ctx[i][2].get("max_seq", ctx[i][0]) if ctx[i][1] == "summary" else ctx[i][0]
                      for i in replaced)
        items = list(ctx.items())
        ctx.clear()
        placed = False
        for key, entry in items:
            if key not in replaced:
                ctx[key] = entry
            elif not placed:
                placed = True
                ctx[row[0]] = (entry[0], "summary", {
                    "content": payload.get("summary", ""),
                    "replaced": sorted(replaced),
                    "max_seq": max_seq,
                })
        self.summaries -= replaced
        self.summaries.add(row[0])
        self.removed.update(dict.fromkeys(replaced, row[0]))

    def _on_system(self, row: EventRow) -> None:
        self.system = row[2].get("content") or None

    def _on_model(self, row: EventRow) -> None:
        self.model = row[2]["model"]

    def _on_pin(self, row: EventRow) -> None:
        self.pins.append(row[2]["text"])

    def _on_unpin(self, row: EventRow) -> None:
        index = row[2]["index"] - 1
        if 0 <= index < len(self.pins):
            del self.pins[index]

    def _on_budget(self, row: EventRow) -> None:
        self.budget = row[2]["budget"]
        self.budget_event = row[0]

    def _on_mail(self, row: EventRow) -> None:
        self.unread[row[0]] = row[2]

    def _on_mail_read(self, row: EventRow) -> None:
        for mail_id in row[2]["ids"]:
            self.unread.pop(mail_id, None)

    def _on_kill(self, row: EventRow) -> None:
        self.dead = True

    def _on_unanswered(self, row: EventRow) -> None:
        """A turn that failed or was cancelled with its user message unanswered: the entry
        is flagged `failed` (the request joins it to the next user message)."""
        key = row[2].get("unanswered")
        entry = self.ctx.get(key) if isinstance(key, int) else None
        if entry is not None and entry[1] == "user":
            reason = row[2].get("message") or row[2].get("reason") or "failed"
            self.ctx[key] = (entry[0], "user", {**entry[2], "failed": reason})

    def _on_fork(self, row: EventRow) -> None:
        payload = row[2]
        if "parent" in payload:  # the child's side: settings chosen at fork
            if payload.get("model"):
                self.model = payload["model"]
            if payload.get("budget") is not None:
                self.budget = payload["budget"]

    # -- reading ---------------------------------------------------------------

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

    def removal(self, key: int) -> EventRow | None:
        """The event that took the message `key` out of the context: a clear, rewind or
        filter; a compact while its summary is in the context (past it, what removed the
        summary). None while the message is in the context, or if it never was."""
        if key in self.ctx:
            return None
        op = self.removed.get(key)
        while op is not None:
            history = self.history
            index = bisect_left(history, op, key=itemgetter(0))
            row = history[index] if index < len(history) else None
            if row is None or row[0] != op:
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

    def snapshot(self, after_mark: int | None = None) -> Snapshot:
        """The state a child inherits: whole, or only the messages after a mark."""
        items = self.ctx.items()
        if after_mark is not None:
            kept = {k for k, e in items if e[0] > after_mark}
            # A mark set between a tool call and its result must not hand the child a
            # result without its call.
            entries = tuple((k, e) for k, e in items if k in kept and not (
                e[1] == "tool_result" and e[2].get("call_event") not in kept))
        else:
            entries = tuple(items)
        present = {k for k, _ in entries}
        result_of = {c: r for c, r in self.result_of.items() if c in present and r in present}
        return Snapshot(entries, self.system, tuple(self.pins), self.model, self.budget, result_of)


_HANDLERS = {
    "clear": Replayer._on_clear,
    "mark": Replayer._on_mark,
    "rewind": Replayer._on_rewind,
    "filter": Replayer._on_filter,
    "compact": Replayer._on_compact,
    "system": Replayer._on_system,
    "model": Replayer._on_model,
    "pin": Replayer._on_pin,
    "unpin": Replayer._on_unpin,
    "budget": Replayer._on_budget,
    "mail": Replayer._on_mail,
    "mail_read": Replayer._on_mail_read,
    "kill": Replayer._on_kill,
    "fork": Replayer._on_fork,
    "error": Replayer._on_unanswered,
    "interrupted": Replayer._on_unanswered,
}


def replay(rows: list[EventRow], base: Snapshot = EMPTY) -> list[tuple[int, str, dict]]:
    """The pure function of SPEC §4: an agent's events (and inheritance) -> its context."""
    return Replayer.from_rows(rows, base).messages()
