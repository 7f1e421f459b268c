"""Saving what can still be read from a damaged log into a new one (`ikigai check --recover`).

Python's sqlite3 has no `.recover`, and the sqlite3 shell may not be installed, so the
rows are read here: the agents, then the events in id ranges. A range that raises (it
crosses a damaged page) is cut in two, again and again, so every row that can be read is
kept and only the rows of the damaged pages are lost. They are written with their own ids
(payloads refer to event ids) into a new database made with our schema, whose trigger
rebuilds the full-text index. An agent that lost its row but kept events (or children)
gets a stand-in row, so nothing saved is orphaned.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from ikigai_tui.store.sqlite.store import Store
from ikigai_tui.store.sqlite.errors import SQLITE_CANTOPEN, SQLITE_READONLY, StoreError, primary_code
from ikigai_tui.store.sqlite.pages import PageFile
from ikigai_tui.store.sqlite.paths import file_state, read_only_uri, sidecars, wal_is_empty

CHUNK = 5000  # event ids read (and written) at a time: memory stays flat on a long log
_AGENT_COLUMNS = ("id", "parent_id", "name", "model", "status", "created_at",
                  "fork_event_id", "budget")
_EVENT_COLUMNS = ("id", "agent_id", "kind", "payload", "created_at")


@dataclass
class Salvage:
    """What `recover` saved, and which event ids it could not."""

    agents: int = 0
    stand_ins: int = 0  # agents whose row was lost, rebuilt from their events
    lost_agent_rows: int = 0
    events: int = 0
    last_id: int = 0  # the highest event id the damaged log knew of (0: unknown)
    lost_runs: list[tuple[int, int]] = field(default_factory=list)  # (first, last) ids

    @property
    def lost(self) -> int:
        return sum(b - a + 1 for a, b in self.lost_runs)

    def lose(self, first: int, last: int) -> None:
        if self.lost_runs and self.lost_runs[-1][1] == first - 1:
            self.lost_runs[-1] = (self.lost_runs[-1][0], last)
        else:
            self.lost_runs.append((first, last))

    def lost_ranges(self, limit: int = 5) -> str:
        """`120-133, 400` for the first few runs of lost ids."""
        shown = [f"{a}-{b}" if a != b else str(a) for a, b in self.lost_runs[:limit]]
        return ", ".join(shown) + (", ..." if len(self.lost_runs) > limit else "")


def _open_source(path: Path) -> sqlite3.Connection:
    """The damaged file, read-only (immutable when its folder cannot take -wal/-shm)."""
    for immutable in (False, True):
        conn = sqlite3.connect(read_only_uri(path, immutable=immutable), uri=True)
        try:
            conn.execute("PRAGMA cell_size_check = ON")  # find more damage, read less garbage
            conn.execute("SELECT name FROM sqlite_master").fetchall()
            return conn
        except sqlite3.DatabaseError as exc:
            conn.close()
            if (not immutable and primary_code(exc) in (SQLITE_READONLY, SQLITE_CANTOPEN)
                    and wal_is_empty(path)):
                continue
            raise StoreError(f"cannot read the table list of {path} ({exc}): nothing "
                             "can be saved from it") from exc
    raise AssertionError("unreachable")


def _max_rowid(conn: sqlite3.Connection, sources: list[str]) -> int | None:
    """The highest id any readable structure knows of (table, then indexes)."""
    for sql in sources:
        try:
            row = conn.execute(sql).fetchone()
        except sqlite3.DatabaseError:
            continue
        if row and row[0] is not None:
            return int(row[0])
    return None


def _read_range(conn: sqlite3.Connection, table: str, columns: tuple[str, ...],
                lo: int, hi: int, lost: list[int]) -> list[tuple]:
    """Rows with rowid in [lo, hi], in order; ranges that raise are halved until the
    single rows that cannot be read are known (added to `lost`)."""
    sql = (f"SELECT rowid, {', '.join(columns)} FROM {table} "
           "WHERE rowid BETWEEN ? AND ? ORDER BY rowid")
    out: list[tuple] = []
    todo = [(lo, hi)]
    while todo:
        a, b = todo.pop()
        try:
            out.extend(conn.execute(sql, (a, b)).fetchall())
        except sqlite3.DatabaseError:
            if a == b:
                lost.append(a)
                continue
            mid = (a + b) // 2
            todo.append((mid + 1, b))
            todo.append((a, mid))  # popped first: rows stay in id order
    return out


def _valid_event(row: tuple) -> bool:
    _, id_, agent_id, kind, payload, created_at = row
    if not (isinstance(id_, int) and isinstance(agent_id, str) and isinstance(kind, str)
            and isinstance(payload, str) and isinstance(created_at, (int, float))):
        return False
    try:
        return isinstance(json.loads(payload), dict)
    except ValueError:
        return False


def _valid_agent(row: tuple) -> bool:
    _, id_, parent, name, model, status, created_at, fork, budget = row
    return (isinstance(id_, str) and isinstance(parent, (str, type(None)))
            and isinstance(name, (str, type(None))) and isinstance(model, str)
            and isinstance(status, str) and isinstance(created_at, (int, float))
            and isinstance(fork, (int, type(None))) and isinstance(budget, (int, type(None))))


def _size_bound(conn: sqlite3.Connection) -> int:
    """An id no row can exceed when nothing says how far ids go: ids are dense from 1
    and a row takes at least a few bytes, so the file's size bounds them."""
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    return max(1, pages * size // 16)


def _insert(table: str, columns: tuple[str, ...]) -> str:
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' for _ in columns)})"


def _copy_agents(src: sqlite3.Connection, dst: sqlite3.Connection, report: Salvage) -> set[str]:
    top = _max_rowid(src, ["SELECT MAX(rowid) FROM agents"])
    unreadable: list[int] = []
    rows = _read_range(src, "agents", _AGENT_COLUMNS, 1,
                       top if top is not None else _size_bound(src), unreadable)
    agents = [r[1:] for r in rows if _valid_agent(r)]
    dst.executemany(_insert("agents", _AGENT_COLUMNS), agents)
    report.agents = len(agents)
    last = top if top is not None else max((r[0] for r in rows), default=0)
    report.lost_agent_rows = len(rows) - len(agents) + sum(1 for i in unreadable if i <= last)
    return {a[0] for a in agents}


@dataclass
class _StandIn:
    """What the events of an agent whose row was lost tell about it."""

    created_at: float
    parent: str | None = None
    fork_event: int | None = None
    model: str = "offline"
    budget: int | None = None

    def note(self, kind: str, payload: str) -> None:
        if kind not in ("fork", "model") or self.parent is not None and kind == "fork":
            return
        data = json.loads(payload)
        if kind == "fork" and isinstance(data.get("parent"), str):  # the child's side
            self.parent = data["parent"]
            self.fork_event = _int_or_none(data.get("parent_event"))
            self.budget = _int_or_none(data.get("budget"))
            if isinstance(data.get("model"), str):
                self.model = data["model"]
        elif kind == "model" and isinstance(data.get("model"), str):
            self.model = data["model"]

    def row(self, agent_id: str, name: str | None) -> tuple:
        return (agent_id, self.parent, name, self.model, "idle", self.created_at,
                self.fork_event, self.budget)


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _copy_events(src: sqlite3.Connection, dst: sqlite3.Connection, report: Salvage) -> int:
    """Copies every event SQL can read; returns the highest id saved."""
    last = _max_rowid(src, [
        "SELECT MAX(rowid) FROM events",
        "SELECT MAX(id) FROM events INDEXED BY events_agent",
        "SELECT MAX(rowid) FROM message_fts_docsize",
    ])
    report.last_id = last or 0
    bound = last if last is not None else _size_bound(src)
    expected = 1  # ids are dense from 1: a gap in what was read is lost events
    for lo in range(1, bound + 1, CHUNK):
        rows = _read_range(src, "events", _EVENT_COLUMNS, lo, min(lo + CHUNK - 1, bound), [])
        good = [r[1:] for r in rows if _valid_event(r)]
        for row in good:
            if row[0] > expected:
                report.lose(expected, row[0] - 1)
            expected = row[0] + 1
        dst.executemany(_insert("events", _EVENT_COLUMNS), good)
        report.events += len(good)
    if report.last_id >= expected:
        report.lose(expected, report.last_id)
    return expected - 1


def _copy_from_pages(source: Path, dst: sqlite3.Connection, report: Salvage,
                     known: set[str], saved_top: int) -> None:
    """Rows SQL could not reach (under a damaged interior page), read from the file's
    leaf pages: the lost events, and agent rows not saved yet."""
    missing = {i for a, b in report.lost_runs for i in range(a, b + 1)}
    open_ended = report.last_id == 0  # nothing said how far ids went

    def wanted(rowid: int, types: list[int]) -> bool:
        if len(types) == len(_EVENT_COLUMNS) and types[0] == 0:  # id is the rowid
            return rowid in missing or (open_ended and rowid > saved_top)
        # An agents row: a text id first (agents are few: decode them all).
        return len(types) == len(_AGENT_COLUMNS) and types[0] >= 13 and types[0] % 2 == 1

    try:
        pages = PageFile(source)
    except OSError:
        return
    events: dict[int, tuple] = {}
    agents: dict[str, tuple] = {}
    try:
        for rowid, values in pages.leaf_rows(wanted):
            if len(values) == len(_EVENT_COLUMNS):
                row = (rowid, rowid, *values[1:])
                if _valid_event(row):
                    events.setdefault(rowid, row[1:])
            elif _valid_agent((rowid, *values)) and values[0] not in known:
                agents.setdefault(values[0], values)
    finally:
        pages.close()
    dst.executemany(_insert("agents", _AGENT_COLUMNS), list(agents.values()))
    report.agents += len(agents)
    report.lost_agent_rows = max(0, report.lost_agent_rows - len(agents))
    known.update(agents)
    dst.executemany(_insert("events", _EVENT_COLUMNS), [events[i] for i in sorted(events)])
    report.events += len(events)
    if open_ended:
        report.last_id = max([saved_top, *events])
        missing |= set(range(saved_top + 1, report.last_id + 1))
    report.lost_runs = []
    for i in sorted(missing - set(events)):
        report.lose(i, i)


def _stand_ins(dst: sqlite3.Connection) -> dict[str, _StandIn]:
    """What the saved events tell of the agents they name that have no row."""
    out: dict[str, _StandIn] = {}
    for agent_id, kind, payload, created_at in dst.execute(
            "SELECT agent_id, kind, payload, created_at FROM events "
            "WHERE agent_id NOT IN (SELECT id FROM agents) ORDER BY id"):
        out.setdefault(agent_id, _StandIn(created_at)).note(kind, payload)
    return out


def _copy(src: sqlite3.Connection, dst: sqlite3.Connection, report: Salvage,
          source: Path) -> None:
    dst.execute("BEGIN")
    known = _copy_agents(src, dst, report)
    saved_top = _copy_events(src, dst, report)
    orphaned = dst.execute(
        "SELECT 1 FROM events WHERE agent_id NOT IN (SELECT id FROM agents) LIMIT 1").fetchone()
    if report.lost_runs or report.last_id == 0 or report.lost_agent_rows or orphaned:
        _copy_from_pages(source, dst, report, known, saved_top)
    orphans = _stand_ins(dst)
    # A parent named by a saved agent or stand-in but lost with all its events: a bare row.
    names = {r[0] for r in dst.execute("SELECT name FROM agents WHERE name IS NOT NULL")}
    wanted = {r[0] for r in dst.execute("SELECT parent_id FROM agents WHERE parent_id IS NOT NULL")}
    wanted |= {o.parent for o in orphans.values() if o.parent is not None}
    for agent_id in sorted(wanted - known - set(orphans)):
        orphans[agent_id] = _StandIn(0.0)
    for agent_id, stand_in in sorted(orphans.items(), key=lambda item: item[1].created_at):
        # The agent with no parent is the root, which the program names "root".
        name = "root" if stand_in.parent is None and "root" not in names else None
        names.add(name)
        dst.execute(_insert("agents", _AGENT_COLUMNS), stand_in.row(agent_id, name))
        report.stand_ins += 1
    try:
        factors = src.execute("SELECT model, factor, samples FROM token_factors").fetchall()
        dst.executemany("INSERT INTO token_factors (model, factor, samples) VALUES (?, ?, ?)",
                        factors)
    except sqlite3.DatabaseError:
        pass  # learned token-count corrections: relearned from the next replies
    dst.execute("COMMIT")


def _salvage(source: Path, target: Path) -> Salvage:
    src = _open_source(source)
    try:
        dst = sqlite3.connect(target, isolation_level=None)
        try:
            # Rows go in id order, a parent possibly after its child: checked at the end.
            dst.execute("PRAGMA foreign_keys = OFF")
            report = Salvage()
            _copy(src, dst, report, source)
            if dst.execute("PRAGMA foreign_key_check").fetchall():
                raise StoreError("the recovered rows do not hold together (foreign keys)")
            return report
        finally:
            dst.close()
    finally:
        src.close()


async def recover(source: Path, target: Path) -> Salvage:
    """Save what can be read of `source` into a new database at `target`, which must
    not exist (nothing is ever written over)."""
    if file_state(target) is not None:
        raise StoreError(f"{target} already exists; give a new file name (nothing is "
                         "written over)")
    # Refused before anything is created when not even the table list can be read.
    await asyncio.to_thread(lambda: _open_source(source).close())
    partial = target.with_name(f".{target.name}.partial-{os.getpid()}")
    store = await Store.open(partial)  # our schema, WAL, 0600; new folders 0700
    await store.close()
    try:
        report = await asyncio.to_thread(_salvage, source, partial)
        try:
            os.link(partial, target)  # fails if the name was taken meanwhile
        except FileExistsError:
            raise StoreError(f"{target} was created meanwhile; nothing was written over it") from None
        except OSError:
            if file_state(target) is not None:  # a file system without hard links
                raise StoreError(f"{target} already exists; nothing was written over it") from None
            os.rename(partial, target)
    finally:
        for leftover in (partial, *sidecars(partial)):
            with contextlib.suppress(FileNotFoundError):
                leftover.unlink()
    return report
