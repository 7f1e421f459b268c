"""Exact token counts from a worker process (issue 14: no stall when a log whose counts
are not kept is opened). Building tiktoken's tables holds the GIL 120-380 ms in one call,
so the full-screen app never builds them: a worker process does, and answers counts.
These tests hold the mechanism: the same counts as this process's encoding, the tables
never built in the app's process, a killed or hung worker replaced, no worker at all
falling back to counting here, and a log's first open counted through it and kept."""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ikigai_tui.core.tokens import encoders
from ikigai_tui.core.tokens.encoders import LocalEncoder
from ikigai_tui.core.events import WriteBatch
from ikigai_tui.core.session import Session, SessionSettings
from ikigai_tui.store.sqlite.store import Store
from ikigai_tui.core.tokens.kept import INLINE, KEEP_AT
from ikigai_tui.core.tokens.encoders import SLICE
from ikigai_tui.core.tokens.counter import TokenCounter
from ikigai_tui.llm import token_worker
from ikigai_tui.llm.providers import Providers
from ikigai_tui.llm.token_worker import RemoteEncoder, WorkerError

ROOT = Path(__file__).resolve().parents[2]
TRICKY = [
    "", "hello world", "Grüße 東京 🙂", "<|endoftext|> special tokens count as text",
    "a lone surrogate \udcff in the middle", "  leading and trailing spaces  \n\n",
    ("long text, cut into slices " * (SLICE // 20)),  # more than one slice
]


@pytest.fixture
def remote():
    made: list[RemoteEncoder] = []

    def make(name: str = "o200k_base") -> RemoteEncoder:
        made.append(RemoteEncoder(name))
        return made[-1]

    yield make
    for encoder in made:
        encoder.close()


class Warnings(logging.Handler):
    """The worker module's warnings, whatever other tests did to logging's set-up."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.texts: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.texts.append(record.getMessage())


@pytest.fixture
def warnings(monkeypatch):
    handler = Warnings()
    monkeypatch.setattr(token_worker.log, "disabled", False)
    monkeypatch.setattr(token_worker.log, "level", logging.WARNING)
    token_worker.log.addHandler(handler)
    yield handler.texts
    token_worker.log.removeHandler(handler)


def _gone(pid: int, timeout: float = 10.0) -> bool:
    """Whether process `pid` has ended (a zombie nobody reaps counts as ended)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_the_worker_counts_as_this_process_does(remote, name):
    encoder = remote(name)
    assert encoder.pid is not None and encoder.pid != os.getpid()
    local = LocalEncoder(name)
    assert encoder.counts(TRICKY) == local.counts(TRICKY)
    assert [encoder.count(t) for t in TRICKY] == local.counts(TRICKY)
    assert encoder.counts([]) == []
    assert encoder.started == 1  # one worker answered every request


def test_a_killed_worker_is_replaced_and_the_counts_still_arrive(remote, warnings):
    encoder = remote()
    first = encoder.pid
    os.kill(first, signal.SIGKILL)
    assert _gone(first)
    assert encoder.counts(TRICKY) == LocalEncoder("o200k_base").counts(TRICKY)
    assert encoder.started == 2 and encoder.pid not in (None, first)
    assert any("token counting worker" in text for text in warnings), warnings


def test_a_hung_worker_is_given_up_on_and_replaced(remote, monkeypatch):
    encoder = remote()
    hung = encoder.pid
    monkeypatch.setattr(token_worker, "ANSWER_TIMEOUT", 0.5)
    os.kill(hung, signal.SIGSTOP)  # alive, never answering
    try:
        t0 = time.monotonic()
        assert encoder.counts(["hello world"]) == [2]
        assert time.monotonic() - t0 < 10
        assert encoder.started == 2 and encoder.pid != hung
        assert _gone(hung), "the hung worker was left behind"
    finally:
        try:
            os.kill(hung, signal.SIGCONT)
        except ProcessLookupError:
            pass


def test_no_worker_means_counting_here(monkeypatch, warnings):
    def broken(self, name):
        raise WorkerError("cannot start")

    monkeypatch.setattr(token_worker.Worker, "__init__", broken)
    encoder = token_worker.make("o200k_base")
    assert isinstance(encoder, LocalEncoder)
    assert encoder.counts(TRICKY) == LocalEncoder("o200k_base").counts(TRICKY)
    assert any("did not start" in text for text in warnings), warnings


def test_workers_failing_twice_in_a_row_mean_counting_here(remote, monkeypatch):
    encoder = remote()

    def dead(self, texts):
        raise WorkerError("the worker ended")

    monkeypatch.setattr(token_worker.Worker, "counts", dead)
    assert encoder.counts(TRICKY) == LocalEncoder("o200k_base").counts(TRICKY)
    assert encoder.started == 2  # one replacement tried, then counted here
    assert encoder.counts(["hello world"]) == [2]  # and here from then on


def test_the_app_process_never_builds_the_tables_and_its_worker_ends_with_it():
    """In a fresh interpreter, as the app runs: tiktoken is not even imported there."""
    script = textwrap.dedent("""
        import json, sys
        from ikigai_tui.core.tokens import encoders
        from ikigai_tui.core.tokens.counter import TokenCounter
        from ikigai_tui.llm import token_worker
        token_worker.install()
        counter = TokenCounter("openai/gpt-4o")
        counts = counter.messages([("user", {"content": t}) for t in json.loads(sys.argv[1])])
        text = counter.text("one more text")
        print(json.dumps({"counts": counts, "text": text, "tiktoken": "tiktoken" in sys.modules,
                          "worker": encoders.encoder("o200k_base").pid}))
    """)
    texts = [t for t in TRICKY if "\udcff" not in t]  # JSON on the command line: no surrogates
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", script, json.dumps(texts)], capture_output=True,
                         text=True, env=env, timeout=120, check=True).stdout
    result = json.loads(out.strip().splitlines()[-1])
    assert result["tiktoken"] is False, "the app's process imported tiktoken (built the tables)"
    here = TokenCounter("openai/gpt-4o")
    here._encoder = LocalEncoder("o200k_base")
    assert result["counts"] == [here.message("user", {"content": t}) for t in texts]
    assert result["text"] == here.text("one more text")
    assert _gone(result["worker"]), "the worker outlived the process it counted for"


def test_counts_of_many_messages_are_one_request(remote):
    encoder = remote()
    calls: list[int] = []
    real = encoder.counts

    def counts(texts):
        calls.append(len(texts))
        return real(texts)

    encoder.counts = counts
    counter = TokenCounter("openai/gpt-4o")
    counter._encoder = encoder
    entries = [("user" if i % 2 else "assistant", {"content": f"message {i} " * 20})
               for i in range(300)]
    counted = counter.messages(entries)
    assert len(calls) == 1 and calls[0] >= 300, "not one request for the batch"
    assert counted == [counter.message(k, p) for k, p in entries]  # one text at a time


def test_a_big_batch_is_sent_in_parts_so_a_single_count_waits_for_one(remote, monkeypatch):
    encoder = remote()
    sizes: list[int] = []
    real = token_worker.Worker.counts

    def counts(self, texts):
        sizes.append(sum(map(len, texts)))
        return real(self, texts)

    monkeypatch.setattr(token_worker.Worker, "counts", counts)
    texts = ["word " * 2_000] * 200 + ["x" * (3 * token_worker.REQUEST_CHARS)]  # 2.4 M chars
    assert encoder.counts(texts) == LocalEncoder("o200k_base").counts(texts)
    assert len(sizes) > 5 and sum(sizes) == sum(map(len, texts))
    assert max(sizes[:-1]) <= token_worker.REQUEST_CHARS  # a longer text goes alone


N = max(KEEP_AT, INLINE) + 40  # counted in a thread and kept


async def test_a_first_open_is_counted_by_the_worker_and_kept(db_path, monkeypatch):
    store = await Store.open(db_path)
    session = await Session.open(store, Providers(), SessionSettings(model="openai/gpt-4o",
                                                                     budget=50_000))
    root = session.tree.root.id
    batch = WriteBatch()
    for i in range(N):
        batch.add(root, "user" if i % 2 == 0 else "assistant",
                  {"content": f"message {i}: " + "some words here " * (i % 40)})
    await session.commit(batch)
    await session.close()
    await store.close()

    copy = db_path.with_name("copy.db")  # counted in this process: the counts to match
    shutil.copyfile(db_path, copy)
    store = await Store.open(copy)
    here = await Session.open(store, Providers(), SessionSettings(model="openai/gpt-4o",
                                                                  budget=50_000))
    expected = (await here.plan(root)).window
    await here.close()
    await store.close()

    made: list[RemoteEncoder] = []

    def make(name: str) -> RemoteEncoder:
        made.append(RemoteEncoder(name))
        return made[-1]

    encoders.use(make)
    try:
        store = await Store.open(db_path)
        session = await Session.open(store, Providers(), SessionSettings(
            model="openai/gpt-4o", budget=50_000))
        window = (await session.plan(root)).window
        assert window.exact and window == expected
        assert [e.name for e in made] == ["o200k_base"] and made[0].started == 1
        assert await store.token_blocks("o200k_base", 1, 10**9), "the counts were not kept"
        await session.close()
        await store.close()
    finally:
        encoders.use(LocalEncoder)
    assert all(e.pid is None for e in made), "switching back did not end the worker"

    def refuse(*_args, **_kwargs):
        raise AssertionError("counted again")

    monkeypatch.setattr(TokenCounter, "load", refuse)  # kept: read back, no encoder at all
    store = await Store.open(db_path)
    again = await Session.open(store, Providers(), SessionSettings(model="openai/gpt-4o",
                                                                   budget=50_000))
    try:
        assert (await again.plan(root)).window == window
    finally:
        await again.close()
        await store.close()
