"""Issue 10, item 3: a stream that ends cleanly but never says why it ended (no finish
reason) is an incomplete reply on every wire format: what arrived is kept flagged
interrupted, an `error` event is committed, and `ikigai run` exits 1. A complete stream,
a `length` / `max_tokens` stop and a tool-call-only stream are not flagged.

Real litellm against the loopback fake (tests/fakes, the `no_finish` knob), through the
Session and through the `ikigai` command line.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from ikigai_tui.core.notices import ErrorNotice, StreamDelta, TurnFinished
from ikigai_tui.core.session import Session, SessionSettings
from ikigai_tui.store.sqlite.store import Store
from ikigai_tui.llm.litellm_provider import NO_FINISH
from ikigai_tui.llm.providers import Providers
from tests.conftest import run_ikigai
from tests.fakes.server import FakeProvider, Reply
from tests.integration.conftest import fmt  # noqa: F401  (a fixture: each wire format)
from tests.integration.provider_helpers import (
    FORMATS, KEY_VARIABLES, MODELS, SECRET, Harness, base_for, close,
)

TEXT = "alpha beta gamma delta"


@pytest.fixture
async def h(tmp_path, fmt):
    async with FakeProvider() as fake:
        store = await Store.open(tmp_path / "x.db")
        providers = Providers(api_base=base_for(fake, fmt), timeout=5, max_retries=2,
                              retry_base_delay=0.01)
        session = await Session.open(store, providers, SessionSettings(model=MODELS[fmt]))
        harness = Harness(fmt, fake, store, session, tmp_path / "x.db")
        session.listeners.append(harness.notices.append)
        yield harness
        await close(harness)


async def say(h: Harness, text: str) -> bool:
    return await asyncio.wait_for(await h.session.say(h.root, text), 20)


async def test_no_finish_reason_keeps_the_text_flagged_interrupted(h):
    h.fake.queue(Reply(text=TEXT, no_finish=True), Reply(text="never asked for"))
    ok = await say(h, "tell me")

    assert ok is False
    assert "".join(n.text for n in h.of(StreamDelta)) == TEXT
    [reply] = await h.events(h.root, "assistant")
    assert reply.payload["content"] == TEXT
    assert reply.payload["interrupted"] is True
    assert NO_FINISH in reply.payload["reason"]
    [error] = await h.events(h.root, "error")
    assert NO_FINISH in error.payload["message"]
    assert [n.message for n in h.of(ErrorNotice)] == [error.payload["message"]]
    assert [t.ok for t in h.of(TurnFinished)] == [False]
    assert len(h.fake.requests) == 1  # a reply already shown is never asked again
    assert h.session.tree[h.root].status == "idle"
    await h.assert_no_secret()


async def test_tool_call_without_finish_is_not_run(h):
    # The call may be cut short: it is neither logged nor executed, and the turn ends.
    h.fake.queue(Reply(tool_calls=[("slash", {"command": "mark", "args": "A"})], no_finish=True),
                 Reply(text="never asked for"))
    ok = await say(h, "mark it")

    assert ok is False
    assert await h.events(h.root, "tool_call") == []
    assert await h.events(h.root, "tool_result") == []
    assert await h.events(h.root, "mark") == []
    assert await h.events(h.root, "assistant") == []
    [error] = await h.events(h.root, "error")
    assert NO_FINISH in error.payload["message"]
    assert len(h.fake.requests) == 1


@pytest.mark.parametrize("reply", [
    Reply(text=TEXT),
    Reply(text=TEXT, stop_reason="length"),
    Reply(text=TEXT, chunk_size=len(TEXT)),  # one piece: Gemini's finishReason rides on it
], ids=["complete", "length", "one-chunk"])
async def test_a_finished_stream_is_not_flagged(h, reply):
    h.fake.queue(reply)
    assert await say(h, "tell me") is True
    [stored] = await h.events(h.root, "assistant")
    assert stored.payload == {"content": TEXT}
    assert await h.events(h.root, "error") == []
    assert h.of(ErrorNotice) == []


async def test_tool_call_only_stream_is_not_flagged(h):
    h.fake.queue(Reply(tool_calls=[("slash", {"command": "mark", "args": "A"})]),
                 Reply(text="marked"))
    assert await say(h, "mark it") is True
    [call] = await h.events(h.root, "tool_call")
    assert json.loads(call.payload["arguments"]) == {"command": "mark", "args": "A"}
    assert len(await h.events(h.root, "tool_result")) == 1
    assert [e.payload["content"] for e in await h.events(h.root, "assistant")] == ["marked"]
    assert await h.events(h.root, "error") == []


# -- the command line -----------------------------------------------------------------------


@pytest.mark.parametrize("wire", FORMATS)
def test_run_exits_1_and_log_shows_the_interrupted_reply(tmp_path, wire):
    db = tmp_path / "run.db"
    with FakeProvider() as fake:
        fake.queue(Reply(text=TEXT, no_finish=True))
        done = run_ikigai("--db", str(db), "--model", MODELS[wire], "--api-base",
                          base_for(fake, wire), "run", input="tell me\n",
                          env={KEY_VARIABLES[wire]: SECRET})
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    assert TEXT in done.stdout
    errors = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and NO_FINISH in errors[0], done.stderr

    log = run_ikigai("--db", str(db), "log", "--json")
    assert log.returncode == 0, log.stderr
    events = json.loads(log.stdout)
    replies = [e["payload"] for e in events if e["kind"] == "assistant"]
    assert len(replies) == 1
    assert replies[0]["content"] == TEXT and replies[0]["interrupted"] is True
    assert [NO_FINISH in e["payload"]["message"] for e in events if e["kind"] == "error"] == [True]


async def test_the_gemini_finish_watch_asks_for_an_uncompressed_body(h):
    """The watch reads the raw body: a gzip'd one would hide every finishReason and
    flag each complete Gemini reply as cut. It asks for identity encoding."""
    h.fake.queue(Reply(text=TEXT))
    assert await say(h, "plain please") is True
    encoding = h.fake.requests[-1].headers.get("accept-encoding")
    if h.fmt == "gemini":
        assert encoding == "identity"
    else:
        assert encoding != "identity"  # only where the wire must be read
