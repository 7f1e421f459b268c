"""A failed turn (issue 13, item 15): its user message stays in the context, flagged (the
error event names it; the replay marks it `failed`), the error says /retry, and no
request ever holds two user messages in a row because of it: the next message is joined
to it, or /retry sends it again without writing it twice. Once per wire format, through
real litellm against the loopback fake."""

from __future__ import annotations

import asyncio
import json

import pytest

from ikigai_tui.cli.output import context_data
from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.notices import ErrorNotice
from tests.fakes.server import Fault, Reply
from tests.integration.provider_helpers import Harness, conversation


def _no_two_users_in_a_row(pairs: list[tuple[str, str]]) -> None:
    roles = [role for role, _ in pairs]
    assert all(not (a == b == "user") for a, b in zip(roles, roles[1:])), pairs


async def _fail_first(h: Harness, text: str = "first question") -> int:
    """A turn that fails at once (a 401 is never retried); the id of its user message."""
    h.fake.queue(Fault.auth())
    assert await h.say(text) is False
    [user] = await h.events(h.root, "user")
    return user.id


async def test_the_failed_message_is_flagged_and_the_error_says_retry(h):
    user_id = await _fail_first(h)
    [error] = await h.events(h.root, "error")
    assert error.payload["unanswered"] == user_id
    assert "/retry" in error.payload["message"]
    assert [n.message for n in h.of(ErrorNotice)] == [error.payload["message"]]
    data = await context_data(h.session, h.session.tree[h.root])
    [message] = data["messages"]
    assert message["id"] == user_id and "/retry" in message["failed"]
    assert h.session.unanswered(h.root) == user_id


async def test_the_next_message_is_joined_to_the_failed_one(h):
    await _fail_first(h)
    h.fake.queue(Reply(text="Both answered."))
    assert await h.say("second question")
    request = h.fake.requests[-1]
    pairs = conversation(request)
    _no_two_users_in_a_row(pairs)
    assert pairs[-1][0] == "user"
    assert "first question" in pairs[-1][1] and "second question" in pairs[-1][1]
    assert pairs[-1][1].index("first question") < pairs[-1][1].index("second question")
    # The context keeps both, as written.
    assert [(k, p["content"]) for _, k, p in await h.context()] == [
        ("user", "first question"), ("user", "second question"), ("assistant", "Both answered.")]
    assert h.session.unanswered(h.root) is None

    h.fake.queue(Reply(text="Third."))
    assert await h.say("third question")
    _no_two_users_in_a_row(conversation(h.fake.requests[-1]))


async def test_retry_sends_the_message_again_without_writing_it_twice(h):
    await _fail_first(h)
    h.fake.queue(Reply(text="Answered at last."))
    result = await h.session.command(h.root, "/retry")
    assert result.lines == ["Sending your last message again."]
    task = h.session.tree[h.root].task
    assert task is not None and await asyncio.wait_for(task, 20)
    pairs = conversation(h.fake.requests[-1])
    assert [p for p in pairs if p[0] == "user"] == [("user", "first question")]
    assert [e.payload["content"] for e in await h.events(h.root, "user")] == ["first question"]
    assert [(k, p["content"]) for _, k, p in await h.context()] == [
        ("user", "first question"), ("assistant", "Answered at last.")]
    with pytest.raises(CommandError, match="nothing to retry"):
        await h.session.command(h.root, "/retry")
    await h.assert_no_secret()


async def test_a_turn_cancelled_before_any_text_is_flagged_too(h):
    h.fake.queue(Reply(text="never sent", stall_after=0, stall_seconds=30))
    task = await h.session.say(h.root, "never answered")
    while not h.fake.requests:
        await asyncio.sleep(0.01)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    [user] = await h.events(h.root, "user")
    [mark] = await h.events(h.root, "interrupted")
    assert mark.payload == {"reason": "cancelled", "unanswered": user.id}
    h.fake.queue(Reply(text="ok"))
    assert await h.say("are you there?")
    _no_two_users_in_a_row(conversation(h.fake.requests[-1]))


async def test_the_flag_survives_a_restart_and_a_fork(make, h):
    await _fail_first(h)
    h.fake.queue(Reply(text="Child answer."))
    child_id = (await h.session.command(h.root, "/fork --name kid follow up")).data
    task = h.session.tree[child_id].task
    assert task is not None and await asyncio.wait_for(task, 20)
    _no_two_users_in_a_row(conversation(h.fake.requests[-1]))
    path = h.path
    from tests.integration.provider_helpers import close

    await close(h)
    again = await make(path=path)
    r = await again.session.replayer(again.root)
    [(_, kind, payload)] = r.messages()
    assert kind == "user" and payload.get("failed")
    assert again.session.unanswered(again.root) is not None


def test_run_retry_after_a_failed_turn(ikigai, tmp_path, fake_sync):
    fake_sync.queue(Fault.auth(), Reply(text="Second time lucky."))
    db = tmp_path / "r.db"
    done = ikigai("--db", str(db), "--model", "openai/x", "--api-base", fake_sync.openai_base,
                  "run", input="hello\n/retry\n", env={"OPENAI_API_KEY": "test-key"})
    assert done.returncode == 1, done.stderr  # the first turn failed
    errors = done.stderr.splitlines()
    assert len(errors) == 1 and "/retry" in errors[0], errors
    assert done.stdout.splitlines() == ["Sending your last message again.", "Second time lucky."]
    data = json.loads(ikigai("--db", str(db), "context", "--json").stdout)
    assert [(m["role"], m["content"]) for m in data["messages"]] == [
        ("user", "hello"), ("assistant", "Second time lucky.")]
    assert "/retry" in data["messages"][0]["failed"]


@pytest.fixture
def fake_sync():
    from tests.fakes.server import FakeProvider

    with FakeProvider() as running:
        yield running
