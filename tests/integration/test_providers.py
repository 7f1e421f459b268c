"""Providers end to end (SPEC §5, §6, §10): a real Session, real litellm, the loopback fake.

Every test runs once per wire format (OpenAI, Anthropic, Gemini). The fake records each
request body, so the tests check what the provider actually received, not only what the
app logged.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from dataclasses import dataclass, field
from typing import Any

import pytest

from ikigai_tui.core.notices import ErrorNotice, RetryNotice, StreamDelta, TurnFinished
from ikigai_tui.core.session import Session, SessionSettings
from ikigai_tui.core.store import Store
from ikigai_tui.llm.providers import Providers
from tests.fakes.server import Fault, FakeProvider, Received, Reply, validate_pairs

FORMATS = ("openai", "anthropic", "gemini")
MODELS = {
    "openai": "openai/fake-model",
    "anthropic": "anthropic/claude-sonnet-4-5",
    "gemini": "gemini/gemini-2.5-pro",
}
# Another model of the same format, for /model.
OTHER_MODELS = {
    "openai": "openai/other",
    "anthropic": "anthropic/claude-3-5-haiku-20241022",
    "gemini": "gemini/gemini-2.5-flash",
}
KEY_VARIABLES = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY",
                 "gemini": "GEMINI_API_KEY"}
SECRET = "test-key"


def base_for(fake: FakeProvider, fmt: str) -> str:
    return fake.openai_base if fmt == "openai" else fake.base_url


def slash(command: str, args: str | None = None) -> tuple[str, dict]:
    return ("slash", {"command": command, **({"args": args} if args is not None else {})})


# -- harness ------------------------------------------------------------------------------


@dataclass
class Harness:
    fmt: str
    fake: FakeProvider
    store: Store
    session: Session
    path: Any
    notices: list = field(default_factory=list)
    closed: bool = False

    @property
    def root(self) -> str:
        return self.session.tree.root.id

    @property
    def model(self) -> str:
        return MODELS[self.fmt]

    def of(self, kind: type) -> list:
        return [n for n in self.notices if isinstance(n, kind)]

    async def events(self, agent_id: str | None = None, kind: str | None = None) -> list:
        found = await self.store.events(agent_id or self.root)
        return [e for e in found if kind is None or e.kind == kind]

    async def context(self, agent_id: str | None = None) -> list[tuple[int, str, dict]]:
        return (await self.session.replayer(agent_id or self.root)).messages()

    async def say(self, text: str, agent_id: str | None = None) -> bool:
        task = await self.session.say(agent_id or self.root, text)
        return await asyncio.wait_for(task, 20)

    async def assert_no_secret(self) -> None:
        """The API key never reaches a message the user sees or the log."""
        for notice in self.notices:
            if isinstance(notice, (ErrorNotice, RetryNotice, TurnFinished)):
                assert SECRET not in repr(notice), notice
        for event in await self.store.events():
            assert SECRET not in json.dumps(event.payload), (event.kind, event.payload)


@pytest.fixture(params=FORMATS)
def fmt(request, monkeypatch) -> str:
    for variable in KEY_VARIABLES.values():
        monkeypatch.setenv(variable, SECRET)
    return request.param


@pytest.fixture
async def fake():
    async with FakeProvider() as running:
        yield running


@pytest.fixture
async def make(tmp_path, fake, fmt):
    """make(**providers_options) -> an open Harness over a fresh database; closed at the end."""
    opened: list[Harness] = []

    async def _make(*, path=None, model: str | None = None, **options) -> Harness:
        settings = dict(api_base=base_for(fake, fmt), timeout=2, max_retries=3,
                        retry_base_delay=0.01)
        settings.update(options)
        path = path or tmp_path / "x.db"
        store = await Store.open(path)
        session = await Session.open(store, Providers(**settings),
                                     SessionSettings(model=model or MODELS[fmt]))
        h = Harness(fmt, fake, store, session, path)
        session.listeners.append(h.notices.append)
        opened.append(h)
        return h

    yield _make
    for h in reversed(opened):
        await close(h)


async def close(h: Harness) -> None:
    if not h.closed:
        h.closed = True
        await h.session.close()
        await h.store.close()


@pytest.fixture
async def h(make) -> Harness:
    return await make()


# -- reading request bodies ---------------------------------------------------------------


def _text_of(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")


def conversation(rec: Received) -> list[tuple[str, str]]:
    """(role, text) of each message of a request, roles as user/assistant/tool; no system."""
    out: list[tuple[str, str]] = []
    if rec.format == "openai":
        for m in rec.body["messages"]:
            if m["role"] in ("system", "developer"):
                continue
            out.append((m["role"], _text_of(m.get("content"))))
    elif rec.format == "anthropic":
        for m in rec.body["messages"]:
            out.append((m["role"], _text_of(m.get("content"))))
    else:
        for c in rec.body["contents"]:
            role = "assistant" if c.get("role") == "model" else c.get("role", "user")
            out.append((role, "".join(p.get("text", "") for p in c.get("parts", []))))
    return out


def exchange(rec: Received) -> tuple[list[tuple[str | None, dict]], list[tuple[str | None, str]]]:
    """The tool calls [(id, args)] and results [(id, content)] in a request body, in order.
    Gemini carries no ids (None)."""
    calls: list[tuple[str | None, dict]] = []
    results: list[tuple[str | None, str]] = []
    if rec.format == "openai":
        for m in rec.body["messages"]:
            for tc in m.get("tool_calls") or []:
                calls.append((tc["id"], json.loads(tc["function"]["arguments"])))
            if m["role"] == "tool":
                results.append((m["tool_call_id"], _text_of(m.get("content"))))
    elif rec.format == "anthropic":
        for m in rec.body["messages"]:
            for b in m["content"] if isinstance(m["content"], list) else []:
                if b.get("type") == "tool_use":
                    calls.append((b["id"], b["input"]))
                elif b.get("type") == "tool_result":
                    content = b.get("content")
                    results.append((b["tool_use_id"], content if isinstance(content, str)
                                    else _text_of(content)))
    else:
        for c in rec.body["contents"]:
            for p in c.get("parts", []):
                call = p.get("functionCall") or p.get("function_call")
                response = p.get("functionResponse") or p.get("function_response")
                if call is not None:
                    calls.append((None, dict(call.get("args") or {})))
                if response is not None:
                    inner = response.get("response") or {}
                    results.append((None, inner.get("content", json.dumps(inner))))
    return calls, results


def expected_exchange(fmt: str, call_events: list, result_events: list):
    """What exchange() must return for these logged tool_call/tool_result events."""
    keep = fmt != "gemini"
    calls = [(e.payload["call_id"] if keep else None, json.loads(e.payload["arguments"]))
             for e in call_events]
    results = [(e.payload["call_id"] if keep else None, e.payload["content"]) for e in result_events]
    return calls, results


def assert_anthropic_clean(rec: Received) -> None:
    if rec.format != "anthropic":
        return
    for m in rec.body["messages"]:
        if m["role"] == "assistant":
            assert m["content"] != "", rec.body["messages"]
            assert m["content"] != [], rec.body["messages"]
            for b in m["content"] if isinstance(m["content"], list) else []:
                assert not (b.get("type") == "text" and not b.get("text")), m


# -- 1. a text turn -----------------------------------------------------------------------


async def test_text_turn_streams_and_logs(h):
    text = "The quick brown fox jumps over the lazy dog"
    h.fake.queue(Reply(text=text, usage=(123, 45), chunk_delay=0.01))
    on_disk_at_first_delta: list = []

    def look(notice) -> None:
        # When the first piece of the reply arrives, the user message is already on disk.
        if isinstance(notice, StreamDelta) and not on_disk_at_first_delta:
            db = sqlite3.connect(h.path)
            try:
                on_disk_at_first_delta.append(db.execute(
                    "SELECT kind, payload FROM events ORDER BY id").fetchall())
            finally:
                db.close()

    h.session.listeners.append(look)
    assert await h.say("unique-question-17")
    assert [(k, json.loads(p)) for k, p in on_disk_at_first_delta[0]] == [
        ("user", {"content": "unique-question-17"})]

    deltas = [n.text for n in h.of(StreamDelta)]
    assert len(deltas) > 1, deltas  # streamed, not one block
    assert "".join(deltas) == text
    assert all(n.agent_id == h.root for n in h.of(StreamDelta))

    events = await h.events()
    kinds = [e.kind for e in events]
    assert kinds.count("user") == 1 and kinds.count("assistant") == 1 and kinds.count("usage") == 1
    user = next(e for e in events if e.kind == "user")
    assistant = next(e for e in events if e.kind == "assistant")
    usage = next(e for e in events if e.kind == "usage")
    assert user.payload["content"] == "unique-question-17"
    assert assistant.payload["content"] == text
    assert not assistant.payload.get("interrupted")
    assert (usage.payload["input_tokens"], usage.payload["output_tokens"]) == (123, 45)
    assert usage.payload["model"] == h.model
    assert user.id < assistant.id

    # The user message was committed, then sent: the request holds it.
    assert len(h.fake.requests) == 1
    rec = h.fake.requests[0]
    assert rec.format == h.fmt
    assert rec.model == h.model.split("/", 1)[1]
    assert rec.stream
    assert conversation(rec) == [("user", "unique-question-17")]
    assert validate_pairs(rec) == []

    turns = h.of(TurnFinished)
    assert len(turns) == 1 and turns[0].ok and turns[0].error is None
    assert h.of(ErrorNotice) == [] and h.of(RetryNotice) == []
    assert [(k, p["content"]) for _, k, p in await h.context()] == [
        ("user", "unique-question-17"), ("assistant", text)]
    assert h.session.tree[h.root].status == "idle"
    await h.assert_no_secret()


# -- 2. the model calls slash: mark, fork, a human-only command ---------------------------


async def test_llm_slash_mark_fork_and_human_only(h):
    h.fake.queue(
        Reply(text="Let me mark this.", tool_calls=[slash("mark", "M1"), slash("undo")]),
        Reply(tool_calls=[slash("fork", "M1 --name kid go")]),
        Reply(text="reply one"),
        Reply(text="reply two"),
    )
    assert await h.say("please delegate")
    await asyncio.wait_for(h.session.wait_idle(), 20)
    root = h.root

    # The mark is in the root's log, created by the LLM.
    marks = await h.events(root, "mark")
    assert [m.payload["name"] for m in marks] == ["M1"]
    commands = [e.payload for e in await h.events(root, "command")]
    assert {"text": "/mark M1", "source": "llm"}.items() <= commands[0].items()

    # The child exists, with the prompt as its user message, and its own reply.
    kids = [a for a in h.session.tree if a.name == "kid"]
    assert len(kids) == 1
    kid = kids[0]
    assert kid.parent_id == root and kid.status == "idle"
    child_events = await h.events(kid.id)
    assert [e.payload["content"] for e in child_events if e.kind == "user"] == ["go"]
    child_said = [e.payload["content"] for e in child_events if e.kind == "assistant"]

    # Parent and child asked concurrently: find which request was the child's.
    assert len(h.fake.requests) == 4
    last_two = h.fake.requests[2:]
    is_child = [conversation(r)[-1] == ("user", "go") for r in last_two]
    assert sorted(is_child) == [False, True], [conversation(r) for r in last_two]
    child_reply = ["reply one", "reply two"][is_child.index(True)]
    parent_reply = ["reply one", "reply two"][is_child.index(False)]
    assert child_said == [child_reply]
    root_said = [e.payload["content"] for e in await h.events(root, "assistant")]
    assert root_said == ["Let me mark this.", parent_reply]

    # The child's request starts with a user message and holds nothing before M1.
    child_rec = last_two[is_child.index(True)]
    assert child_rec.format == h.fmt
    assert validate_pairs(child_rec) == []
    assert conversation(child_rec) == [("user", "go")]
    assert "please delegate" not in json.dumps(child_rec.body)

    # tool_call / tool_result pairs in the log, matching call ids.
    calls = await h.events(root, "tool_call")
    results = await h.events(root, "tool_result")
    assert len(calls) == 3 and len(results) == 3
    by_id = {c.payload["call_id"]: c for c in calls}
    assert len(by_id) == 3
    for r in results:
        call = by_id[r.payload["call_id"]]
        assert r.payload["call_event"] == call.id
        assert r.id > call.id
    if h.fmt == "openai":
        assert set(by_id) == {"call_1", "call_2", "call_3"}
    elif h.fmt == "anthropic":
        assert set(by_id) == {"toolu_1", "toolu_2", "toolu_3"}
    result_of = {json.loads(by_id[r.payload["call_id"]].payload["arguments"])["command"]: r.payload
                 for r in results}
    assert result_of["mark"]["is_error"] is False
    assert result_of["mark"]["content"] == "Checkpoint 'M1' created."
    assert result_of["fork"]["is_error"] is False
    assert result_of["fork"]["content"].startswith("Forked. Child: ")
    assert result_of["undo"]["is_error"] is True
    assert result_of["undo"]["content"].startswith("Error:")
    assert "undo" in result_of["undo"]["content"]
    # A refused human-only command writes nothing but its result.
    assert await h.events(root, "undo") == []

    # The parent's request after the fork holds both rounds, valid.
    parent_rec = last_two[is_child.index(False)]
    assert validate_pairs(parent_rec) == []
    got_calls, got_results = exchange(parent_rec)
    assert (got_calls, got_results) == expected_exchange(h.fmt, calls, results)
    assert h.of(ErrorNotice) == []
    await h.assert_no_secret()


# -- 3. several tool rounds in one turn ---------------------------------------------------


async def test_tool_rounds_send_every_earlier_exchange(h):
    h.fake.queue(
        Reply(tool_calls=[slash("mark", "A")]),
        Reply(text="Now the agents.", tool_calls=[slash("agents")]),
        Reply(tool_calls=[slash("context"), slash("marks")]),
        Reply(text="All three rounds done."),
    )
    assert await h.say("go through the rounds")
    assert len(h.fake.requests) == 4

    calls = await h.events(h.root, "tool_call")
    results = await h.events(h.root, "tool_result")
    assert len(calls) == 4 and len(results) == 4
    assert [r.payload["is_error"] for r in results] == [False] * 4
    # Calls made per round: 1, 1, 2.
    rounds = [0, 1, 2, 4]
    for k, rec in enumerate(h.fake.requests):
        assert rec.format == h.fmt
        assert validate_pairs(rec) == [], (k, rec.body)
        assert_anthropic_clean(rec)
        assert conversation(rec)[0] == ("user", "go through the rounds")
        n = rounds[k]
        assert exchange(rec) == expected_exchange(h.fmt, calls[:n], results[:n]), k
    # The text said alongside a call travels with it.
    texts = [t for role, t in conversation(h.fake.requests[3]) if role == "assistant" and t]
    assert texts == ["Now the agents."]
    assert [e.payload["content"] for e in await h.events(h.root, "assistant")] == [
        "Now the agents.", "All three rounds done."]
    assert len(await h.events(h.root, "usage")) == 4
    await h.assert_no_secret()


# -- 4. /clear by the LLM is deferred to the end of the turn ------------------------------


async def test_llm_clear_is_deferred_to_turn_end(h):
    h.fake.queue(Reply(text="first answer"))
    assert await h.say("first question")
    h.fake.queue(Reply(tool_calls=[slash("clear")]), Reply(text="cleared, bye"))
    assert await h.say("second question")

    after_round = h.fake.requests[-1]
    assert validate_pairs(after_round) == []
    said = conversation(after_round)
    assert ("user", "first question") in said
    assert ("assistant", "first answer") in said
    assert ("user", "second question") in said
    result = (await h.events(h.root, "tool_result"))[0]
    assert result.payload["is_error"] is False
    assert result.payload["content"].startswith("Accepted; applied when this turn ends")

    # Applied when the turn ended: after the final reply.
    events = await h.events()
    clear = [e for e in events if e.kind == "clear"]
    assert len(clear) == 1
    last_reply = [e for e in events if e.kind == "assistant"][-1]
    assert last_reply.payload["content"] == "cleared, bye"
    assert clear[0].id > last_reply.id
    assert await h.context() == []

    h.fake.queue(Reply(text="fresh"))
    assert await h.say("after the clear")
    assert conversation(h.fake.requests[-1]) == [("user", "after the clear")]
    await h.assert_no_secret()


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
    await assert_failed_once(h, ok, "who am i")
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


# -- 6. requests stay valid for every provider --------------------------------------------


async def test_forget_tool_call_removes_its_result(h):
    h.fake.queue(Reply(text="Looking.", tool_calls=[slash("marks")]), Reply(text="Nothing marked."))
    assert await h.say("any marks?")
    call = (await h.events(h.root, "tool_call"))[0]
    result = (await h.events(h.root, "tool_result"))[0]
    out = await h.session.command(h.root, f"/forget --ids {call.id}")
    assert out.lines == ["Forgot 2 messages (with 1 tool-call partner)."]
    ctx_ids = [i for i, _, _ in await h.context()]
    assert call.id not in ctx_ids and result.id not in ctx_ids

    h.fake.queue(Reply(text="ok then"))
    assert await h.say("and now?")
    rec = h.fake.requests[-1]
    assert validate_pairs(rec) == []
    assert_anthropic_clean(rec)
    assert exchange(rec) == ([], [])
    text = json.dumps(rec.body)
    assert call.payload["call_id"] not in text or h.fmt == "gemini"
    assert result.payload["content"] not in text
    assert conversation(rec) == [
        ("user", "any marks?"), ("assistant", "Looking."), ("assistant", "Nothing marked."),
        ("user", "and now?"),
    ] or conversation(rec) == [
        # Providers that merge consecutive assistant messages.
        ("user", "any marks?"), ("assistant", "Looking.Nothing marked."), ("user", "and now?"),
    ]
    await h.assert_no_secret()


async def test_child_from_mark_sends_a_valid_request(h):
    # The LLM marks M mid-turn: after M come the mark's result and the final reply.
    h.fake.queue(Reply(text="Marking.", tool_calls=[slash("mark", "M")]),
                 Reply(text="Brief: build the parser."))
    assert await h.say("prepare a brief")
    out = await h.session.command(h.root, "/fork M --name worker")
    child = out.data
    kinds = [k for _, k, _ in await h.context(child)]
    assert "user" not in kinds and kinds[-1] == "assistant"  # starts without a user message

    h.fake.queue(Reply(text="on it"))
    assert await h.say("start working", child)
    rec = h.fake.requests[-1]
    assert validate_pairs(rec) == []
    assert_anthropic_clean(rec)
    said = conversation(rec)
    assert said[0][0] == "user"
    assert ("assistant", "Brief: build the parser.") in said
    assert said[-1] == ("user", "start working")
    assert "prepare a brief" not in json.dumps(rec.body)
    assert exchange(rec) == ([], [])
    await h.assert_no_secret()


# -- 7. per-agent models ------------------------------------------------------------------


async def test_model_switch_persists_across_reopen(make, fmt, fake):
    h = await make()
    other = OTHER_MODELS[fmt]
    out = await h.session.command(h.root, f"/model {other}")
    assert out.lines == [f"Model set to {other}."]
    h.fake.queue(Reply(text="from the other model"))
    assert await h.say("hello other")
    assert fake.requests[-1].model == other.split("/", 1)[1]
    usage = (await h.events(h.root, "usage"))[-1]
    assert usage.payload["model"] == other
    path = h.path
    await close(h)

    again = await make(path=path)
    root = again.session.tree.root
    assert again.session.model_of(root) == other
    assert root.model == other
    assert (await again.session.command(root.id, "/model")).lines == [f"Model: {other}"]
    again.fake.queue(Reply(text="still the other"))
    assert await again.say("after reopen")
    assert fake.requests[-1].model == other.split("/", 1)[1]
    assert fake.requests[-1].format == fmt


async def test_fork_with_another_provider(make, fmt, fake):
    child_fmt = FORMATS[(FORMATS.index(fmt) + 1) % len(FORMATS)]
    child_model = MODELS[child_fmt]
    h = await make(model_api_bases={child_model: base_for(fake, child_fmt)})
    fake.queue(Reply(text="parent first"))
    assert await h.say("hello parent")
    fake.queue(Reply(text="child answer"))
    out = await h.session.command(h.root, f"/fork --model {child_model} --name other go on")
    child = out.data
    await asyncio.wait_for(h.session.wait_idle(), 20)
    fake.queue(Reply(text="parent second"))
    assert await h.say("parent again")

    assert [r.format for r in fake.requests] == [fmt, child_fmt, fmt]
    assert fake.requests[1].model == child_model.split("/", 1)[1]
    for rec in fake.requests:
        assert validate_pairs(rec) == []
    assert conversation(fake.requests[1]) == [
        ("user", "hello parent"), ("assistant", "parent first"), ("user", "go on")]
    assert [e.payload["content"] for e in await h.events(child, "assistant")] == ["child answer"]
    assert h.session.model_of(h.session.tree[child]) == child_model
    assert h.session.model_of(h.session.tree[h.root]) == MODELS[fmt]
    assert (await h.events(child, "usage"))[0].payload["model"] == child_model
    path = h.path
    await close(h)

    again = await make(path=path, model_api_bases={child_model: base_for(fake, child_fmt)})
    kid = again.session.tree.resolve("other")
    assert again.session.model_of(kid) == child_model
    fake.queue(Reply(text="child again"))
    assert await again.say("more", kid.id)
    assert fake.requests[-1].format == child_fmt
