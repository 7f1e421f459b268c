"""The full-screen app counts exact tokens in a worker process (issue 14: opening a log
whose counts are not kept must not freeze the screen while tiktoken's tables are built):
an OpenAI agent's uncounted log is counted there and the counts kept; the offline model
starts no worker."""

from __future__ import annotations

import os
import sqlite3

import pytest

from ikigai_tui.core.tokens import encoders
from ikigai_tui.core.tokens.encoders import LocalEncoder
from ikigai_tui.core.events import WriteBatch
from ikigai_tui.core.tokens.kept import KEEP_AT
from ikigai_tui.llm import token_worker
from ikigai_tui.llm.token_worker import RemoteEncoder

from .conftest import SIZE, root_id, settle


@pytest.fixture(autouse=True)
def counted_here_after():
    yield
    encoders.use(LocalEncoder)  # the app installed workers: end them, as other tests expect


async def _messages(bench, n: int) -> None:
    async with bench.prep() as session:
        root = root_id(session)
        batch = WriteBatch()
        for i in range(n):
            batch.add(root, "user" if i % 2 == 0 else "assistant",
                      {"content": f"message {i}: " + "words to count " * (i % 30)})
        await session.commit(batch)


async def test_an_uncounted_openai_log_is_counted_in_a_worker_and_kept(bench):
    await _messages(bench, KEEP_AT + 40)
    with sqlite3.connect(bench.db) as db:  # the log's agent on an exact model, nothing kept
        db.execute("UPDATE agents SET model = 'openai/gpt-4o'")
        db.execute("DELETE FROM message_tokens")
    db.close()
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, timeout=60)
        counter = app.session.meter(app.session.tree[app.focused_agent]).counter
        assert counter.exact
        encoder = counter._encoder
        assert isinstance(encoder, RemoteEncoder), encoder
        assert encoder.pid is not None and encoder.pid != os.getpid()
        gauge = app.gauge.render().plain
        assert gauge.startswith("Sent: ") and not gauge.startswith("Sent: ~"), gauge
        kept = await app.session.store.token_blocks("o200k_base", 1, 10**9)
        assert kept, "the counts were not kept"


async def test_the_offline_model_starts_no_worker(bench, monkeypatch):
    started: list[str] = []

    def refuse(self, name):
        started.append(name)
        raise AssertionError("a token worker started")

    monkeypatch.setattr(token_worker.Worker, "__init__", refuse)
    await _messages(bench, KEEP_AT + 40)
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, timeout=60)
        assert encoders.factory() is token_worker.make  # installed, never used
        assert app.gauge.render().plain.startswith("Sent: ~")
    assert started == []
