"""Issue 10, item 10: a full disk. A write that does not fit fails as one StoreError line
("the disk is full"), nothing of it is written, everything committed before stays intact
and readable, and the store (and a turn in progress) goes on instead of crashing.

Simulated with SQLite's max_page_count, and for real on a small tmpfs where the machine
lets the tests mount one (root), skipped with the reason elsewhere.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from ikigai_tui.core.notices import ErrorNotice, TurnFinished
from ikigai_tui.core.provider import ProviderError, TextDelta
from ikigai_tui.core.session import Session, SessionSettings
from ikigai_tui.core.ports import StoreError
from ikigai_tui.store.sqlite.store import Store
from ikigai_tui.llm.providers import Providers
from tests.conftest import run_ikigai
from tests.unit.store_helpers import open_with_agents

BIG = "x" * 200_000  # needs new pages: more than the database may grow


async def _cap_growth(store: Store) -> None:
    """From now on the database may not grow by a single page: SQLITE_FULL."""
    (pages,), = await store._db.execute_fetchall("PRAGMA page_count")
    await store._db.execute(f"PRAGMA max_page_count = {pages}")


async def test_a_full_database_refuses_the_batch_and_keeps_every_committed_event(tmp_path):
    path = tmp_path / "full.db"
    store = await open_with_agents(path, "a")
    try:
        committed = [await store.append("a", "user", {"content": f"kept {i}"}) for i in range(40)]
        await _cap_growth(store)
        with pytest.raises(StoreError) as info:
            await store.append("a", "user", {"content": BIG})
        message = str(info.value)
        assert f"cannot write to {path}: the disk is full" in message
        assert "\n" not in message
        # Several writers grouped into one transaction: each is told, none is written.
        results = await asyncio.gather(*(store.append("a", "assistant", {"content": BIG})
                                         for _ in range(3)), return_exceptions=True)
        assert all(isinstance(r, StoreError) and "disk is full" in str(r) for r in results), results
        assert [(e.id, e.payload) for e in await store.events()] == \
               [(e.id, e.payload) for e in committed]
        # Room again: the store goes on, with the next id (nothing half-written).
        await store._db.execute("PRAGMA max_page_count = 1073741823")
        after = await store.append("a", "user", {"content": BIG})
        assert after.id == committed[-1].id + 1
    finally:
        await store.close()
    reopened = await Store.open(path, readonly=True)
    try:
        assert await reopened.integrity_check() == "ok"
        assert await reopened.count_events() == len(committed) + 1
    finally:
        await reopened.close()


class _Reply:
    model = "offline"
    offline = True

    def __init__(self, text: str = "", fail: str | None = None) -> None:
        self.text, self.fail = text, fail

    async def stream(self, request):
        yield TextDelta(self.text)
        if self.fail:
            raise ProviderError(self.fail)


class _Stub(Providers):
    def __init__(self, reply: _Reply) -> None:
        super().__init__()
        self.reply = reply

    def get(self, model: str):
        return self.reply


async def _turn_with_a_full_disk(db_path: Path, reply: _Reply, *, fail_all_later: bool):
    """Say one message; after it is committed the disk is full. Returns (turn result,
    notices, events in the log)."""
    store = await Store.open(db_path)
    session = await Session.open(store, _Stub(reply), SessionSettings())
    notices: list = []
    session.listeners.append(notices.append)
    root = session.tree.root
    real_commit = session.commit

    async def commit(batch):
        if fail_all_later and not any(e.kind == "user" for e in batch.events):
            raise StoreError(f"cannot write to {db_path}: the disk is full; this change was "
                             "not saved, everything saved before it is kept")
        events = await real_commit(batch)
        if any(e.kind == "user" for e in events):
            await _cap_growth(store)
        return events

    session.commit = commit  # type: ignore[method-assign]
    try:
        task = await session.say(root.id, "hello")
        ok = await asyncio.wait_for(task, 10)
        assert not root.in_turn and root.status == "idle"
        events = await store.events()
    finally:
        await session.close()
        await store.close()
    return ok, notices, events


async def test_a_reply_that_does_not_fit_ends_the_turn_with_one_message(db_path):
    """The reply cannot be saved (real SQLITE_FULL), nor then the error event: the turn
    ends with the message, the user's message stays, nothing raises."""
    ok, notices, events = await _turn_with_a_full_disk(db_path, _Reply(BIG), fail_all_later=False)
    assert ok is False
    errors = [n for n in notices if isinstance(n, ErrorNotice)]
    assert len(errors) == 1
    assert errors[0].message.startswith(f"cannot write to {db_path}: the disk is full")
    # Shown by every listener: either the error event was saved, or the notice says so.
    saved_error = [e for e in events if e.kind == "error"]
    assert errors[0].logged == bool(saved_error)
    assert [e.kind for e in events if e.kind in ("user", "assistant")] == ["user"]
    assert any(isinstance(n, TurnFinished) and not n.ok for n in notices)


async def test_when_the_error_event_cannot_be_saved_the_turn_still_ends_and_says_so(db_path):
    ok, notices, events = await _turn_with_a_full_disk(
        db_path, _Reply("", fail="the provider hung up"), fail_all_later=True)
    assert ok is False
    errors = [(n.message, n.logged) for n in notices if isinstance(n, ErrorNotice)]
    assert errors[0] == ("the provider hung up; /retry sends your message again", False)
    assert "disk is full" in errors[1][0] and errors[1][1] is False
    assert [e.kind for e in events] == ["user"]
    assert any(isinstance(n, TurnFinished) and not n.ok for n in notices)


# -- a real full file system --------------------------------------------------------------


@pytest.fixture
def small_disk():
    """A 384 KiB tmpfs; skipped where mounting is not allowed."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a small tmpfs needs root and mount(8)")
    where = Path(tempfile.mkdtemp(prefix="ikigai-full-"))
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=384k,mode=0700", "tmpfs",
                           str(where)], capture_output=True)
    if done.returncode != 0:
        where.rmdir()
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], capture_output=True)
        where.rmdir()


def test_run_on_a_disk_that_fills_up_loses_nothing_committed(small_disk, tmp_path):
    db = small_disk / "x.db"
    inputs = [f"message {i} " + "y" * 400 for i in range(60)]
    done = run_ikigai("--db", str(db), "run", input="".join(f"{m}\n" for m in inputs),
                      env={"IKIGAI_OFFLINE_DELAY": "0"})
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    errors = done.stderr.splitlines()
    assert errors, "the disk never filled up"
    assert all(e.startswith(f"Error: cannot write to {db}: the disk is full") for e in errors), errors[:3]
    # What the log holds is readable, whole and in order: a prefix of the inputs.
    check = run_ikigai("--db", str(db), "check")
    assert check.returncode == 0, check.stdout + check.stderr
    events = json.loads(run_ikigai("--db", str(db), "log", "--json").stdout)
    users = [e["payload"]["content"] for e in events if e["kind"] == "user"]
    assert 0 < len(users) < len(inputs)
    assert users == inputs[:len(users)]
    # Every reply that was saved answers the message before it.
    kinds = [e["kind"] for e in events if e["kind"] in ("user", "assistant")]
    assert kinds[:2 * (len(users) - 1)] == ["user", "assistant"] * (len(users) - 1)
    # A copy on a disk with room takes new writes again.
    copy = tmp_path / "copy.db"
    shutil.copy(db, copy)
    wal = Path(f"{db}-wal")
    if wal.exists():
        shutil.copy(wal, f"{copy}-wal")
    more = run_ikigai("--db", str(copy), "run", input="after the move\n", env={"IKIGAI_OFFLINE_DELAY": "0"})
    assert more.returncode == 0, more.stderr
    conn = sqlite3.connect(copy)
    try:
        assert conn.execute("SELECT COUNT(*) FROM events WHERE kind = 'user'").fetchone()[0] == len(users) + 1
    finally:
        conn.close()


async def test_a_deferred_command_that_cannot_be_saved_still_ends_the_turn(db_path):
    """The LLM's /clear waits for the turn's end; if the disk is full by then, the turn
    still ends (the agent idle, one message), nothing escapes the turn's task."""
    store = await Store.open(db_path)
    session = await Session.open(store, Providers(), SessionSettings())
    notices: list = []
    session.listeners.append(notices.append)
    root = session.tree.root
    real_commit = session.commit

    async def commit(batch):
        if any(e.kind == "clear" for e in batch.events):
            raise StoreError(f"cannot write to {db_path}: the disk is full; this change was "
                             "not saved, everything saved before it is kept")
        return await real_commit(batch)

    session.commit = commit  # type: ignore[method-assign]
    try:
        task = await session.say(root.id, "tidy up\n@slash clear")
        ok = await asyncio.wait_for(task, 10)
        assert ok is True  # the turn itself completed; only the deferred change failed
        assert not root.in_turn and root.status == "idle"
        errors = [n.message for n in notices if isinstance(n, ErrorNotice)]
        assert len(errors) == 1 and errors[0].startswith("deferred /clear")
        assert "disk is full" in errors[0]
        assert "clear" not in [e.kind for e in await store.events()]
    finally:
        await session.close()
        await store.close()
