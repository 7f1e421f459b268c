"""Providers end to end (SPEC §5, §6, §10), the turns: a real Session, real litellm, the
loopback fake, once per wire format (OpenAI, Anthropic, Gemini). A streamed text turn and
what it logs; the model calling slash (mark, fork, a refused human-only command); several
tool rounds in one turn; an LLM /clear deferred to the turn's end; and the requests sent
after the log was edited (a forgotten tool call, a child forked from a mark) staying valid.
The fake records each request body, so these check what the provider actually received.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3

from ikigai_tui.core.notices import ErrorNotice, RetryNotice, StreamDelta, TurnFinished
from tests.fakes.server import Reply, validate_pairs
from tests.integration.provider_helpers import (
    assert_anthropic_clean, conversation, exchange, expected_exchange, slash,
)


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
