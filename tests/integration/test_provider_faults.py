"""Providers end to end (SPEC §5, §10), the faults, once per wire format: transient
errors (rate limit, server error, overloaded) retried with the server's retry-after
honoured; retries bounded; auth, not-found and context-length errors reported in one line,
not retried, naming the key, the model or /clear; a reply cut off mid-stream, stalled or
cancelled keeping its partial text, flagged interrupted and never retried. In every case
the user message is kept, the agent goes idle and the API key is never shown nor logged.
"""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from ikigai_tui.core.notices import ErrorNotice, RetryNotice, StreamDelta, TurnFinished
from tests.fakes.server import Fault, Reply, presented_key, validate_pairs
from tests.integration.provider_helpers import KEY_VARIABLES, SECRET, Harness, conversation


# -- 5. faults ----------------------------------------------------------------------------


async def assert_failed_once(h: Harness, ok: bool, user_text: str) -> str:
    """The turn failed with exactly one one-line error; the user message is kept."""
    assert ok is False
    errors = h.of(ErrorNotice)
    assert len(errors) == 1, errors
    message = errors[0].message
    assert "\n" not in message and message.strip()
    turns = h.of(TurnFinished)
    assert len(turns) == 1 and turns[0].ok is False
    users = [e.payload["content"] for e in await h.events(h.root, "user")]
    assert users == [user_text]
    assert ("user", user_text) in [(k, p.get("content")) for _, k, p in await h.context()]
    assert h.session.tree[h.root].status == "idle"
    return message


@pytest.mark.parametrize("fault", ["rate_limit", "server_error", "overloaded"])
async def test_transient_fault_is_retried(h, fault):
    item = Fault.rate_limit(retry_after=1) if fault == "rate_limit" else getattr(Fault, fault)()
    h.fake.queue(item, Reply(text="made it after all"))
    started = time.monotonic()
    assert await h.say("try hard")
    elapsed = time.monotonic() - started

    retries = h.of(RetryNotice)
    assert len(retries) == 1, retries
    assert retries[0].attempt == 1 and retries[0].agent_id == h.root
    assert retries[0].reason and "\n" not in retries[0].reason
    if fault == "rate_limit":
        assert retries[0].delay >= 1  # the server's retry-after is honoured
        assert elapsed >= 1
        assert "rate limit" in retries[0].reason
    else:
        assert retries[0].delay < 1
    if fault == "overloaded":
        assert "overloaded" in retries[0].reason or "503" in retries[0].reason
    assert len(h.fake.requests) == 2
    assert h.fake.requests[0].body == h.fake.requests[1].body
    assert h.of(ErrorNotice) == []
    assert [e.payload["content"] for e in await h.events(h.root, "assistant")] == [
        "made it after all"]
    assert await h.events(h.root, "error") == []
    await h.assert_no_secret()


async def test_retries_are_bounded(h):
    h.fake.queue(*[Fault.server_error() for _ in range(5)])
    ok = await h.say("doomed")
    message = await assert_failed_once(h, ok, "doomed")
    assert len(h.fake.requests) == 4  # 1 + max_retries=3
    assert h.fake.pending == 1
    assert "4 attempts" in message
    assert [n.attempt for n in h.of(RetryNotice)] == [1, 2, 3]
    assert [e.payload["message"] for e in await h.events(h.root, "error")] == [message]
    assert await h.events(h.root, "assistant") == []
    await h.assert_no_secret()


async def test_auth_error_names_the_key_and_is_not_retried(h):
    h.fake.queue(Fault.auth(), Reply(text="must not be used"))
    ok = await h.say("who am i")
    message = await assert_failed_once(h, ok, "who am i")
    assert KEY_VARIABLES[h.fmt] in message
    assert len(h.fake.requests) == 1
    assert h.of(RetryNotice) == []
    assert [e.payload["message"] for e in await h.events(h.root, "error")] == [message]


async def test_auth_error_does_not_show_the_key(h):
    # Providers may echo the key they were sent (OpenAI: "Incorrect API key provided:
    # <key>"); the key in use, whatever its shape, must never be shown nor logged.
    h.fake.queue(Fault.auth())
    ok = await h.say("who am i")
    message = await assert_failed_once(h, ok, "who am i")
    [request] = h.fake.requests
    sent = presented_key(request.headers, request.path)
    assert sent == SECRET  # the key went out, and the fake's error echoed it back
    assert SECRET in json.dumps(Fault.auth().render(request.format, request.model, sent)[2])
    assert SECRET not in message
    await h.assert_no_secret()


async def test_not_found_names_the_model(h):
    h.fake.queue(Fault.not_found())
    ok = await h.say("anyone there")
    message = await assert_failed_once(h, ok, "anyone there")
    assert h.model in message
    assert len(h.fake.requests) == 1 and h.of(RetryNotice) == []
    await h.assert_no_secret()


async def test_context_length_points_to_clear(h):
    h.fake.queue(Fault.context_length())
    ok = await h.say("a very long story")
    message = await assert_failed_once(h, ok, "a very long story")
    assert "/clear" in message
    assert len(h.fake.requests) == 1 and h.of(RetryNotice) == []
    await h.assert_no_secret()


async def assert_interrupted(h: Harness, ok: bool, user_text: str, partial: str) -> dict:
    await assert_failed_once(h, ok, user_text)
    replies = await h.events(h.root, "assistant")
    assert len(replies) == 1
    payload = replies[0].payload
    assert payload["content"] == partial
    assert payload["interrupted"] is True
    assert len(h.fake.requests) == 1  # a reply already shown is never retried
    await h.assert_no_secret()
    return payload


FULL = "alpha beta gamma delta epsilon zeta"


@pytest.mark.parametrize("failure", ["drop", "malformed"])
async def test_mid_stream_failure_keeps_partial(h, failure):
    # A reset socket may take the last unread piece with it (the kernel drops unread data
    # on RST): the delay makes sure the client has read the first piece before the drop.
    knob = {"drop_after": 2, "chunk_delay": 0.05} if failure == "drop" else {"malformed_after": 2}
    h.fake.queue(Reply(text=FULL, **knob), Reply(text="should not be asked"))
    ok = await h.say("tell me")
    shown = "".join(n.text for n in h.of(StreamDelta))
    if failure == "drop":
        assert shown in ("alpha ", "alpha beta "), shown
    else:
        assert shown == "alpha beta "
    payload = await assert_interrupted(h, ok, "tell me", shown)
    assert "cut off" in payload["reason"]


async def test_stall_is_cut_by_timeout(h):
    h.fake.queue(Reply(text=FULL, stall_after=2, stall_seconds=30))
    started = time.monotonic()
    ok = await h.say("slowly")
    assert time.monotonic() - started < 5
    await assert_interrupted(h, ok, "slowly", "alpha beta ")


async def test_cancel_keeps_partial_and_goes_idle(h):
    h.fake.queue(Reply(text="a b c d e f g h", chunk_delay=0.3))
    first = asyncio.Event()
    h.session.listeners.append(lambda n: isinstance(n, StreamDelta) and first.set())
    task = await h.session.say(h.root, "stream slowly")
    await asyncio.wait_for(first.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 10)

    agent = h.session.tree[h.root]
    assert agent.status == "idle" and not agent.in_turn and agent.task.done()
    replies = await h.events(h.root, "assistant")
    assert len(replies) == 1
    payload = replies[0].payload
    assert payload["interrupted"] is True
    assert payload["content"] and "a b c d e f g h".startswith(payload["content"])
    assert len(payload["content"]) < len("a b c d e f g h")
    assert payload["content"] == "".join(n.text for n in h.of(StreamDelta))
    assert [e.payload["content"] for e in await h.events(h.root, "user")] == ["stream slowly"]
    assert ("user", "stream slowly") in [(k, p.get("content")) for _, k, p in await h.context()]
    assert h.of(ErrorNotice) == []

    # The agent works again, and the next request is valid.
    h.fake.queue(Reply(text="back again"))
    assert await h.say("continue")
    rec = h.fake.requests[-1]
    assert validate_pairs(rec) == []
    assert conversation(rec)[0] == ("user", "stream slowly")
    assert conversation(rec)[-1] == ("user", "continue")
    await h.assert_no_secret()
