"""Pure replay: an agent's events -> its context (SPEC §4).

The context is a mapping `id -> entry` kept in log order (a `Context`: parallel arrays,
core/replay/rows.py, ~18 bytes a message; the history a `Rows`, ~10). An entry is
`(seq, kind, payload)`: a message's seq is its id, a compaction summary's seq is that of
the first message it replaced. Because the context is in seq order, a rewind pops from
the tail and touches only what it removes, and an append is O(1), so replaying N events
costs O(N) and appending one event costs O(1).

`Replayer.from_rows` is the one-shot replay used when an agent is opened;
`Replayer.apply` is the incremental step used as events are committed. Both run the same
per-event code; the property tests check that they always agree.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ikigai_tui.core.events import CONTEXT_MESSAGE_KINDS, UNDOABLE_KINDS, EventRow
from ikigai_tui.core.replay.bodies import NO_BODY
from ikigai_tui.core.replay.context import Context
from ikigai_tui.core.tool_results import cleared_stub
from ikigai_tui.core.replay.queries import EMPTY, Entry, Mark, ReplayQueries, Snapshot
from ikigai_tui.core.replay.rows import KIND_NAMES, Rows, kind_code

UNDO_CODES = frozenset(kind_code(k) for k in (*UNDOABLE_KINDS, "undo"))

__all__ = ["EMPTY", "Entry", "Mark", "Replayer", "Snapshot", "replay"]


class Replayer(ReplayQueries):
    """The replayed state of one agent: context, marks, settings, mailbox."""

    def __init__(self, base: Snapshot = EMPTY) -> None:
        self.base = base
        self.history = Rows()  # this agent's own events, for /undo
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
        self.ctx: Context = base.entries.context()
        self.summaries: set[int] = set(base.entries.keys_of_kind("summary"))
        self.result_of: dict[int, int] = dict(base.result_of)
        self.marks: dict[object, Mark] = {}
        self.system = base.system
        self.pins: list[str] = list(base.pins)
        self.model = base.model
        self.budget = base.budget
        self.budget_event: int | None = None  # the /budget in effect, if any
        # This agent's own permission grants, (tool, rule) in log order; those inherited
        # are the base's (see `grants`).
        self.granted: list[tuple[str, str]] = []
        self.cwd = base.cwd  # the workspace: a `cwd` event's folder, or inherited at fork
        self.unread: dict[int, dict] = {}
        # Context key -> the event (clear, rewind, filter, compact) that took it out; a
        # key leaves once per time it is in the context (a restore brings it back and
        # drops its entry here), so keeping this costs O(1) per entry.
        self.removed: dict[int, int] = {}
        # A user message flagged unanswered -> its flagged payload (few: failed turns), so
        # a restore brings it back as it left.
        self.flagged: dict[int, dict] = {}
        # A tool result whose text is cleared -> the `tool_output` event that cleared it
        # (0: inherited so at fork); its entry carries the stub sent (`cleared`).
        self.cleared: dict[int, int] = dict.fromkeys(base.cleared, 0)

    # -- building --------------------------------------------------------------

    @classmethod
    def from_rows(cls, rows: Sequence[EventRow], base: Snapshot = EMPTY) -> Replayer:
        """Replay a whole log in one pass (undo targets are collected first).

        Takes ownership of `rows` when it is a `Rows`: it becomes the history later
        `apply` calls extend (a list is copied into one).
        """
        return cls.undoing(rows, base, set())

    @classmethod
    def undoing(cls, rows: Sequence[EventRow], base: Snapshot, undone: set[int]) -> Replayer:
        """The state of `rows` with the events `undone` undone (and those the rows undo):
        what an /undo would leave. Takes ownership of `rows` (a `Rows`) and `undone`."""
        r = cls(base)
        r.undone = undone
        ops = r.ops
        history = rows if isinstance(rows, Rows) else Rows(rows)
        for key, kind, payload in history.of_kinds(UNDO_CODES):
            if kind == "undo":
                undone.add(payload["target"])
            else:
                ops.append(key)
        r.history = history
        r._replay_history()
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
            self._replay_history()
            return
        end = len(self.history)
        self._replay(end - 1, end)

    def apply_many(self, rows: Iterable[EventRow]) -> None:
        for row in rows:
            self.apply(row)

    def _replay_history(self) -> None:
        """The whole history replayed, the long runs of plain messages appended as
        array slices: O(N) in C, not in Python."""
        history, ctx = self.history, self.ctx
        start = 0  # the rows before it are replayed
        for a, b in history.plain_runs():
            if a > start:
                self._replay(start, a)
            if not ctx.extend(*history.run(a, b)):
                self._replay(a, b)
            start = b
        if start < len(history):
            self._replay(start, len(history))

    def _replay(self, start: int, end: int) -> None:
        """history[start:end] replayed, read from its arrays (no row is made but for
        the events with a handler)."""
        history, ctx = self.history, self.ctx
        get = history.payloads.get
        # Messages wait in plain lists and go into the context a batch at a time, before
        # the next handler that reads or changes the context runs, and at the end.
        keys: list[int] = []
        codes: list[int] = []
        payloads: dict[int, dict] = {}
        message_codes, result_code, on_context = _MESSAGE_CODES, _TOOL_RESULT, _ON_CONTEXT
        undone = self.undone
        handlers = _CODE_HANDLERS
        for key, code in zip(history.ids[start:end], history.kinds[start:end]):
            if code in message_codes:
                keys.append(key)
                codes.append(code)
                payload = get(key)
                if payload is not None:
                    payloads[key] = payload
                if code == result_code:
                    self.result_of[(payload or NO_BODY).get("call_event")] = key
            elif key not in undone:
                handler = handlers.get(code)
                if handler is not None:
                    if keys and code in on_context:
                        ctx.append_many(keys, codes, payloads)
                        keys, codes, payloads = [], [], {}
                    handler(self, (key, KIND_NAMES[code], get(key, NO_BODY)))
        if keys:
            ctx.append_many(keys, codes, payloads)

    # -- event handlers --------------------------------------------------------

    def _on_clear(self, row: EventRow) -> None:
        self.changes += 1
        self.removed.update(dict.fromkeys(self.ctx, row[0]))
        self.ctx.clear()
        self.summaries.clear()
        self.marks.clear()
        self.cleared.clear()

    def _on_mark(self, row: EventRow) -> None:
        name = row[2].get("name")
        key: object = name if name is not None else ("#", row[0])
        if name is not None:
            self.mark_names_seen.add(name)
        self.marks.pop(key, None)  # re-using a name moves the mark
        # A mark placed at an earlier entry (/mark --at) is at that entry's seq.
        self.marks[key] = Mark(name, row[2].get("at", row[0]))

    def _on_rewind(self, row: EventRow) -> None:
        target = row[2]["mark_event"]
        if not any(m.event_id == target for m in self.marks.values()):
            return  # the mark is not valid here: nothing to rewind to
        # The marks past it go (by place: one set later may be at an earlier entry).
        for key in [k for k, m in self.marks.items() if m.event_id > target]:
            del self.marks[key]
        self._truncate_after(target, row[0])

    def _truncate_after(self, seq: int, by: int) -> None:
        self.changes += 1
        ctx = self.ctx
        removed = self.removed
        # The entries past the mark are a tail of the context: cut at once.
        keys, codes, payloads = ctx.cut_after(seq)
        removed.update(dict.fromkeys(keys, by))
        if self.summaries:
            self.summaries.difference_update(keys)
        removed_results = [payloads.get(k, NO_BODY) for k, c in zip(keys, codes) if c == _TOOL_RESULT]
        # A summary that covers anything after the mark goes too.
        for sid in [s for s in self.summaries if ctx[s][2]["max_seq"] > seq]:
            del ctx[sid]
            self.summaries.discard(sid)
            removed[sid] = by
        # A mark set between a tool call and its result must not leave the call orphaned.
        for payload in removed_results:
            call = payload.get("call_event")
            if call in ctx:
                del ctx[call]
                removed[call] = by

    def _on_filter(self, row: EventRow) -> None:
        self.changes += 1
        payload = row[2]
        if payload["mode"] == "restore":
            self._restore(payload)
            return
        ctx = self.ctx
        for i in self.filter_removes(payload["mode"], payload["ids"]):
            del ctx[i]
            self.summaries.discard(i)
            self.removed[i] = row[0]

    def _restore(self, payload: dict) -> None:
        """`filter restore IDS` (SPEC §8, /recall): the listed messages of this agent's
        lineage come back at their place in log order, each with its tool-call partner;
        those in the context stay as they are. A message is this agent's own (its
        history), inherited at fork (the base), or an ancestor's from outside what was
        inherited: that one's outline travels in the event (`rows`), so replay needs
        nothing but the log. O(context + restored), like a compact."""
        ctx = self.ctx
        carried: dict[int, EventRow] = {}
        carried_results: dict[int, int] = {}
        for key, kind, outline in payload.get("rows") or ():
            carried[key] = (key, kind, outline)
            if kind == "tool_result":
                carried_results[outline.get("call_event")] = key
        back: dict[int, EventRow] = {}
        todo = list(payload["ids"])
        while todo:
            key = todo.pop()
            if key is None or key in ctx or key in back:
                continue
            row = self.message_row(key) or carried.get(key)
            if row is None:
                continue
            if key in self.flagged:
                row = (key, row[1], self.flagged[key])
            back[key] = row
            if row[1] == "tool_result":
                todo.append(row[2].get("call_event"))
            elif row[1] == "tool_call":
                todo.append(self.result_of.get(key, carried_results.get(key)))
        if not back:
            return
        new = sorted(back.items())
        for key, row in new:
            self.removed.pop(key, None)
            self.cleared.pop(key, None)  # it comes back whole, as the log has it
            if row[1] == "tool_result":
                self.result_of[row[2].get("call_event")] = key
        ctx.insert_sorted(new)

    def _on_compact(self, row: EventRow) -> None:
        self.changes += 1
        payload = row[2]
        ctx = self.ctx
        replaced = self.with_partners({i for i in payload["ids"] if i in ctx})
        if not replaced:
            return
        max_seq = max(ctx[i][2].get("max_seq", ctx[i][0]) if ctx[i][1] == "summary" else ctx[i][0]
                      for i in replaced)
        # The summary takes the place of the first message it replaces (O(replaced)).
        first = min(replaced, key=ctx.position)
        seq = ctx[first][0]
        for key in replaced:
            if key != first:
                del ctx[key]
        ctx.replace(first, row[0], (seq, "summary", {
            "content": payload.get("summary", ""),
            "replaced": sorted(replaced),
            "max_seq": max_seq,
        }))
        self.summaries -= replaced
        self.summaries.add(row[0])
        self.removed.update(dict.fromkeys(replaced, row[0]))

    def _on_tool_output(self, row: EventRow) -> None:
        """/forget --tool-results (or its automatic rule) clears the text sent of tool
        results: each entry carries its stub (`cleared`, what the request sends instead);
        `restore` brings the text back. The call and the result stay in the context."""
        self.changes += 1
        payload, ctx = row[2], self.ctx
        if payload.get("action") == "restore":
            for key in payload["ids"]:
                entry = ctx.get(key)
                if self.cleared.pop(key, None) is not None and entry is not None:
                    rest = {k: v for k, v in entry[2].items() if k != "cleared"}
                    ctx[key] = (entry[0], entry[1], rest or NO_BODY)
            return
        for key, tokens in zip(payload["ids"], payload["tokens"]):
            entry = ctx.get(key)
            if entry is None or entry[1] != "tool_result" or key in self.cleared:
                continue
            ctx[key] = (entry[0], "tool_result", {**entry[2], "cleared": cleared_stub(key, tokens)})
            self.cleared[key] = row[0]

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

    def _on_permission(self, row: EventRow) -> None:
        payload = row[2]
        self.granted.append((str(payload.get("tool", "")), str(payload.get("rule", "allow"))))
    def _on_cwd(self, row: EventRow) -> None:
        self.cwd = row[2]["path"]

    def _on_mail(self, row: EventRow) -> None:
        self.unread[row[0]] = row[2]

    def _on_mail_read(self, row: EventRow) -> None:
        for mail_id in row[2]["ids"]:
            self.unread.pop(mail_id, None)

    def _on_kill(self, row: EventRow) -> None:
        self.dead = row[1] == "kill"  # a `revive` brings it back

    def _on_unanswered(self, row: EventRow) -> None:
        """A turn that failed or was cancelled with its user message unanswered: the entry
        is flagged `failed` (the request joins it to the next user message)."""
        key = row[2].get("unanswered")
        entry = self.ctx.get(key) if isinstance(key, int) else None
        if entry is not None and entry[1] == "user":
            reason = row[2].get("message") or row[2].get("reason") or "failed"
            self.ctx[key] = (entry[0], "user", {**entry[2], "failed": reason})
            self.flagged[key] = self.ctx[key][2]

    def _on_fork(self, row: EventRow) -> None:
        payload = row[2]
        if "parent" in payload:  # the child's side: settings chosen at fork
            if payload.get("model"):
                self.model = payload["model"]
            if payload.get("budget") is not None:
                self.budget = payload["budget"]


_HANDLERS = {
    "clear": Replayer._on_clear,
    "mark": Replayer._on_mark,
    "rewind": Replayer._on_rewind,
    "filter": Replayer._on_filter,
    "compact": Replayer._on_compact,
    "tool_output": Replayer._on_tool_output,
    "system": Replayer._on_system,
    "model": Replayer._on_model,
    "pin": Replayer._on_pin,
    "unpin": Replayer._on_unpin,
    "budget": Replayer._on_budget,
    "permission": Replayer._on_permission,
    "cwd": Replayer._on_cwd,
    "mail": Replayer._on_mail,
    "mail_read": Replayer._on_mail_read,
    "kill": Replayer._on_kill,
    "revive": Replayer._on_kill,
    "fork": Replayer._on_fork,
    "error": Replayer._on_unanswered,
    "interrupted": Replayer._on_unanswered,
}
_CODE_HANDLERS = {kind_code(kind): handler for kind, handler in _HANDLERS.items()}
_MESSAGE_CODES = frozenset(kind_code(kind) for kind in CONTEXT_MESSAGE_KINDS)
_TOOL_RESULT = kind_code("tool_result")
# The handlers that read or change the context (the others: settings, marks, mail).
_ON_CONTEXT = frozenset(kind_code(kind) for kind in
                        ("clear", "rewind", "filter", "compact", "error", "interrupted",
                         "tool_output"))


def replay(rows: list[EventRow], base: Snapshot = EMPTY) -> list[tuple[int, str, dict]]:
    """The pure function of SPEC §4: an agent's events (and inheritance) -> its context."""
    return Replayer.from_rows(rows, base).messages()
