"""Per-message token counts computed once and kept (issue 14): the first plan of a log
counts its messages off the event loop and keeps the counts; a later open of the same log
reads them back and counts nothing, with the same window; an exact model is measured
without loading its tokenizer once its counts are kept; an old log (schema 5) gains the
tables and is counted once."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from ikigai_tui.core.events import WriteBatch
from ikigai_tui.store.sqlite.schema import MIGRATIONS, SCHEMA_VERSION
from ikigai_tui.core.session import Session, SessionSettings
from ikigai_tui.store.sqlite.store import Store
from ikigai_tui.core.tokens.kept import INLINE, KEEP_AT
from ikigai_tui.core.tokens.counter import TokenCounter
from ikigai_tui.llm.providers import Providers

N = max(KEEP_AT, INLINE) + 40  # enough messages to be counted in a thread and kept


async def _open(path, model: str = "offline", messages: int = 0) -> tuple[Session, Store]:
    store = await Store.open(path)
    session = await Session.open(store, Providers(), SessionSettings(model=model, budget=50_000))
    root = session.tree.root.id
    if messages:
        batch = WriteBatch()
        for i in range(messages):
            kind = "user" if i % 2 == 0 else "assistant"
            batch.add(root, kind, {"content": f"message {i}: " + "some words here " * (i % 40)})
        await session.commit(batch)
    return session, store


async def _close(session: Session, store: Store) -> None:
    await session.close()
    await store.close()


def _refuse(*_args, **_kwargs):
    raise AssertionError("counted again")


async def test_counts_are_kept_and_a_reopened_log_counts_nothing(db_path, monkeypatch):
    session, store = await _open(db_path, messages=N)
    root = session.tree.root.id
    threads: list[bool] = []
    counted = TokenCounter.messages

    def messages(self, entries):
        threads.append(threading.current_thread() is threading.main_thread())
        return counted(self, entries)

    monkeypatch.setattr(TokenCounter, "messages", messages)
    before = (await session.plan(root)).window
    assert threads == [False], "the messages were counted on the event loop's thread"
    kept = await store.token_blocks("bytes/4", 1, 10**9)
    assert kept, "the counts were not kept"
    await _close(session, store)

    monkeypatch.setattr(TokenCounter, "messages", _refuse)
    monkeypatch.setattr(TokenCounter, "message", _refuse)
    again, store = await _open(db_path)
    try:
        after = (await again.plan(again.tree.root.id)).window
        assert after == before
    finally:
        await _close(again, store)


async def test_an_exact_model_is_measured_without_its_tokenizer_once_counted(db_path, monkeypatch):
    session, store = await _open(db_path, model="openai/gpt-4o", messages=N)
    before = (await session.plan(session.tree.root.id)).window
    assert before.exact
    await _close(session, store)

    monkeypatch.setattr(TokenCounter, "load", _refuse)
    monkeypatch.setattr(TokenCounter, "message", _refuse)
    again, store = await _open(db_path, model="openai/gpt-4o")
    try:
        assert (await again.plan(again.tree.root.id)).window == before
    finally:
        await _close(again, store)


async def test_another_encoding_is_counted_once_and_kept_apart(db_path):
    session, store = await _open(db_path, messages=N)
    root = session.tree.root.id
    await session.plan(root)
    await session.command(root, "/model openai/gpt-4o")
    gpt = (await session.plan(root)).window
    assert gpt.exact
    assert await store.token_blocks("o200k_base", 1, 10**9)
    assert await store.token_blocks("bytes/4", 1, 10**9)
    fresh = TokenCounter("openai/gpt-4o")
    raw = sum(fresh.message(kind, payload) for _i, kind, payload in await session.messages(root))
    assert gpt.window == fresh.scale(raw) or gpt.pruned_turns
    await _close(session, store)


async def test_an_old_log_gains_the_tables_and_is_counted_once(db_path):
    conn = sqlite3.connect(db_path)
    for version in range(1, 6):
        for statement in MIGRATIONS[version]:
            conn.execute(statement)
    conn.execute("PRAGMA user_version = 5")
    conn.commit()
    conn.close()
    session, store = await _open(db_path, messages=N)
    try:
        assert store.version == SCHEMA_VERSION >= 6
        await session.plan(session.tree.root.id)
        assert await store.token_blocks("bytes/4", 1, 10**9)
    finally:
        await _close(session, store)


@pytest.mark.parametrize("model", ["offline", "openai/gpt-4o"])
async def test_a_read_only_open_counts_and_keeps_nothing(db_path, model):
    session, store = await _open(db_path, model=model, messages=N)
    await _close(session, store)
    ro = await Store.open(db_path, readonly=True)
    try:
        viewer = await Session.open(ro, Providers(), SessionSettings(model=model), create_root=False)
        window = (await viewer.plan(viewer.tree.root.id)).window
        assert window.tokens > 0
        await viewer.close()
    finally:
        await ro.close()
