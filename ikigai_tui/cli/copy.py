"""`ikigai copy SRC DST [--replace]`: a whole log from one database to another (a SQLite
file or a postgresql:// URL, either way), then verified.

Everything the log is, is copied as it is: the agents (parent, name, model, status,
created_at, fork_event_id, budget), every event with its id, agent, kind, payload and
time (payloads refer to ids: a tool result's call, marks, undo targets), and the token
factors. Kept token counts and message vectors are not: they are recomputed when needed.
Events are read from SRC and written to DST PAGE at a time, in one transaction of DST
(a copy that fails writes nothing). DST must hold no log: a SQLite file that does is
moved aside with --replace; a PostgreSQL one never is (a new ?schema=NAME is).

Then every agent is replayed on both sides and its context compared (each message's id,
kind and payload; its marks, system prompt, pins, model, budget, workspace and undone
events), and every event read back: a difference is listed and the exit status is 1.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from ikigai_tui.core.events import AgentRecord, Event
from ikigai_tui.core.ports import CannotOpen, ConflictError, StoreError
from ikigai_tui.core.session import Session, SessionSettings
from ikigai_tui.llm.providers import Providers
from ikigai_tui.store import open_store
from ikigai_tui.support.inert import sanitize
from ikigai_tui.support.urls import is_url, shown

PAGE = 5000  # events read from SRC, and written to DST, at once
MAX_SHOWN = 20  # differences listed; the rest are counted


def _say(line: str) -> None:
    print(sanitize(line), flush=True)


class Progress:
    """`events copied / total, rate` on stderr, redrawn in place; only on a terminal."""

    def __init__(self, total: int, stream: Any = None) -> None:
        self.total = total
        self.done = 0
        self.stream = stream or sys.stderr
        self.shown = self.stream.isatty()
        self.started = time.monotonic()
        self._drawn = 0.0

    def advance(self, count: int) -> None:
        self.done += count
        now = time.monotonic()
        if self.shown and (now - self._drawn >= 0.1 or self.done >= self.total):
            self._drawn = now
            self._draw(now)

    def _draw(self, now: float) -> None:
        share = self.done / self.total if self.total else 1.0
        filled = int(share * 30)
        rate = self.done / max(now - self.started, 1e-6)
        self.stream.write(f"\r[{'#' * filled}{'.' * (30 - filled)}] {self.done:,}/"
                          f"{self.total:,} events {share:4.0%}  {rate:,.0f} events/s ")
        self.stream.flush()

    def end(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


async def _opened(target: str | Path, **options: Any) -> Any:
    """The store at `target`; one that cannot be opened is CannotOpen (exit 2)."""
    try:
        return await open_store(target, **options)
    except CannotOpen:
        raise
    except StoreError as exc:
        raise CannotOpen(str(exc)) from exc


async def _holds_log(store: Any) -> bool:
    return bool(await store.agents()) or await store.count_events() > 0


def _aside(path: Path) -> Path:
    """Move the SQLite file `path` (and its -wal and -shm) to PATH.bak-TIME; the new name."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    aside = path.with_name(f"{path.name}.bak-{stamp}")
    n = 1
    while aside.exists():
        n += 1
        aside = path.with_name(f"{path.name}.bak-{stamp}-{n}")
    for suffix in ("-wal", "-shm"):
        part = path.with_name(path.name + suffix)
        if part.exists():
            os.replace(part, aside.with_name(aside.name + suffix))
    os.replace(path, aside)
    return aside


async def _destination(dst: str, replace: bool) -> Any:
    """DST open and holding no log; CannotOpen (nothing written) when it holds one."""
    if is_url(dst):
        if replace:
            raise CannotOpen("--replace moves a SQLite file aside; a PostgreSQL log is never "
                             "replaced: copy into a new schema (?schema=NAME in the URL)")
        store = await _opened(dst)
        if await _holds_log(store):
            await store.close()
            raise CannotOpen(f"{shown(dst)} already holds a log; copy into a new schema "
                             "(?schema=NAME in the URL); nothing was written")
        return store
    path = Path(dst).expanduser()
    if path.is_file() and path.stat().st_size > 0:
        probe = await _opened(path, create=False, readonly=True)  # an old file: not migrated
        try:
            full = await _holds_log(probe)
        finally:
            await probe.close()
        if full and not replace:
            raise CannotOpen(f"{path} already holds a log; give a new file, or --replace to "
                             "move it aside first; nothing was written")
        if full:
            _say(f"Moved {path} aside to {_aside(path)}")
    return await _opened(path)


async def _pages(src: Any, last: int, progress: Progress) -> AsyncIterator[Sequence[Event]]:
    after = 0
    while after < last:
        page = [e for e in await src.tail(after, PAGE) if e.id <= last]
        if not page:
            return
        yield page
        after = page[-1].id
        progress.advance(len(page))


def _first_difference(here: list, there: list) -> str:
    for n, (a, b) in enumerate(zip(here, there)):
        if a != b:
            return f"message {n + 1} (id {a[0]} here, {b[0]} there) differs"
    return f"{len(here)} messages in SRC, {len(there)} in DST"


def _settings(replayer: Any) -> tuple:
    """What an agent's replay holds besides its messages."""
    return (sorted(replayer.marks.values(), key=lambda m: m.event_id), replayer.system, list(replayer.pins),
            replayer.model, replayer.budget, replayer.cwd, replayer.dead,
            sorted(replayer.undone), list(replayer.granted))


async def _compare_agents(src: Any, dst: Any, agents: list[AgentRecord]) -> list[str]:
    """Every agent replayed on both sides: how the contexts differ (none: [])."""
    problems = []
    sessions = []
    try:
        for store in (src, dst):
            sessions.append(await Session.open(store, Providers(), SessionSettings(),
                                               create_root=False))
        here, there = sessions
        for agent in agents:
            label = here.tree.label(agent.id)
            if agent.id not in there.tree:
                problems.append(f"agent {label} is not in DST")
                continue
            a, b = await here.messages(agent.id), await there.messages(agent.id)
            if a != b:
                problems.append(f"agent {label} replays differently: {_first_difference(a, b)}")
            elif (_settings(await here.replayer(agent.id))
                  != _settings(await there.replayer(agent.id))):
                problems.append(f"agent {label} replays differently: its marks or settings")
    finally:
        for session in sessions:
            await session.close()
    return problems


async def _compare_events(src: Any, dst: Any, last: int) -> list[str]:
    """Every event read back from DST as SRC has it."""
    after = 0
    while after < last:
        here = [e for e in await src.tail(after, PAGE) if e.id <= last]
        there = await dst.tail(after, len(here) or 1)
        if here != there:
            for a, b in zip(here, there):
                if a != b:
                    return [f"event {a.id} reads back differently"]
            return [f"events after {after}: {len(here)} in SRC, {len(there)} in DST"]
        if not here:
            break
        after = here[-1].id
    if await dst.max_event_id() != last:
        return [f"DST has events after {last}"]
    return []


async def copy(args: argparse.Namespace) -> int:
    src_name, dst_name = args.src, args.dst
    if not is_url(src_name) and not is_url(dst_name) and \
            Path(src_name).expanduser().resolve() == Path(dst_name).expanduser().resolve():
        raise CannotOpen("SRC and DST are the same file")
    src = await _opened(src_name if is_url(src_name) else Path(src_name).expanduser(),
                        create=False, readonly=True)
    try:
        # The last event first, then the agents: every event up to it has its agent.
        last = await src.max_event_id()
        agents = await src.agents()
        total = await src.count_events()
        factors = await src.token_factors()
        dst = await _destination(dst_name, args.replace)
        try:
            progress = Progress(total)
            try:
                copied = await dst.import_log(agents, _pages(src, last, progress), factors)
            except ConflictError as exc:  # another writer filled DST meanwhile
                raise CannotOpen(f"{exc}; nothing was written") from exc
            finally:
                progress.end()
            problems = await _compare_events(src, dst, last)
            problems += await _compare_agents(src, dst, agents)
        finally:
            await dst.close()
    finally:
        await src.close()
    where = f"from {shown(src_name)} to {shown(dst_name)}"
    summary = f"Copied {len(agents):,} agents, {copied:,} events {where}"
    if not problems:
        _say(f"{summary}; every agent replays the same.")
        return 0
    for problem in problems[:MAX_SHOWN]:
        _say(f"  {problem}")
    if len(problems) > MAX_SHOWN:
        _say(f"  {len(problems) - MAX_SHOWN} more not shown")
    count = f"{len(problems)} difference" + ("s" if len(problems) > 1 else "")
    _say(f"{summary}; {count} (listed above).")
    return 1
