"""`ikigai check [--recover OUT]`: is the log sound, and saving what can be read if not.

The check opens the database read-only, runs SQLite's full integrity check (every page),
replays every agent the way the program does (and reads its every event's text), and reports agents, events and problems:
exit status 0 when healthy, 1 when damaged. `--recover OUT` then copies every readable
row into a new database at OUT (never over an existing file).
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from ikigai_tui.config import Config
from ikigai_tui.core.ports import StoreError
from ikigai_tui.store.sqlite.recover import recover
from ikigai_tui.support.inert import sanitize
from ikigai_tui.runtime import close_session, open_session

MAX_SHOWN = 20  # integrity findings listed; the rest are counted
BODY_BATCH = 2000  # payloads read at once while checking that every agent's text reads


def _say(line: str) -> None:
    print(sanitize(line), flush=True)


def _detail(exc: BaseException) -> str:
    """SQLite's own words when a StoreError wraps them (the report says what to do)."""
    return str(exc.__cause__) if exc.__cause__ is not None else str(exc)


async def _examine(config: Config) -> tuple[int, int, list[str]]:
    """(agents, events, problems) of the database, read-only."""
    problems: list[str] = []
    try:
        session = await open_session(config, create=False, readonly=True)
    except StoreError as exc:
        return 0, 0, [str(exc)]
    try:
        store = session.store
        try:
            found = await store.integrity_problems(MAX_SHOWN + 1)
        except StoreError as exc:
            found = [f"the check stopped: {_detail(exc)}"]
        found = [line for text in found for line in text.splitlines()
                 if line.strip() and not line.startswith("*** in database")]
        problems += [f"integrity: {p}" for p in found[:MAX_SHOWN]]
        if len(found) > MAX_SHOWN:
            problems.append(f"integrity: {len(found) - MAX_SHOWN}+ more not shown")
        events = 0
        agents = list(session.tree)
        for agent in agents:
            try:
                replayer = await session.replayer(agent.id)
                # The replay reads the outlines' index (schema 8): read every event's
                # payload too, as the program does when it needs the text.
                ids = [row[0] for row in replayer.history]
                for start in range(0, len(ids), BODY_BATCH):
                    await store.payloads(ids[start:start + BODY_BATCH])
            except Exception as exc:  # damaged pages, or rows the replay cannot read
                problems.append(f"agent {session.tree.label(agent.id)} cannot be replayed: "
                                f"{_detail(exc)}")
                continue
            events += len(replayer.history)
        try:
            stored = await store.count_events()
        except StoreError as exc:
            problems.append(f"the events cannot be counted: {_detail(exc)}")
        else:
            if not problems and stored != events:
                problems.append(f"{stored} events are stored but the agents replay {events}")
            events = max(events, stored)
        return len(agents), events, problems
    finally:
        await close_session(session)


async def check(args: argparse.Namespace, config: Config) -> int:
    if config.db_is_url and args.recover:
        raise StoreError("--recover reads a damaged SQLite file; a PostgreSQL log is "
                         "recovered by the server's own backups")
    path = config.db_shown if config.db_is_url else Path(config.db)
    target = Path(args.recover).expanduser() if args.recover else None
    if target is not None and target.exists():
        raise StoreError(f"{target} already exists; give a new file name (nothing is written over)")
    if not config.db_is_url and not Path(path).exists():
        raise StoreError(f"no database at {path}")
    agents, events, problems = await _examine(config)
    _say(f"{path}: {agents} agents, {events} events, {len(problems)} problems")
    for problem in problems:
        _say(f"  {problem}")
    if problems:
        hint = "" if target is not None else (
            f"; run `ikigai --db {shlex.quote(str(path))} check --recover NEW.db` to save "
            "what can still be read into a new database")
        _say(f"Damaged{hint}.")
    else:
        _say("Healthy: the integrity check passed and every agent replays.")
    if target is not None:
        report = await recover(path, target)
        lost = (f"{report.lost} lost (ids {report.lost_ranges()})" if report.lost
                else "none lost")
        extra = f", {report.stand_ins} stand-in agents for lost agent rows" if report.stand_ins else ""
        _say(f"Recovered into {target}: {report.agents} agents{extra}, "
             f"{report.events} events saved, {lost}.")
        if report.last_id == 0 and problems:
            print("Note: the damaged log does not say how many events it held; events "
                  "after the last one saved may be lost too.", file=sys.stderr)
    return 1 if problems else 0
