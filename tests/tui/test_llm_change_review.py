"""The review of context changes the LLM asks for, in the full screen (issue 28 item 1),
through real turns (the loopback fake provider behind real litellm): an LLM's
`filter_context apply` opens the preview modal, the user unticks one message and
accepts (the filter carries the ticked ids, the tool result says "edited" and which it
kept); two agents whose LLMs ask at the same time get one modal at a time, each titled
with its agent, the second shown when the first is answered."""

from __future__ import annotations

import json

import pytest

from ikigai_tui.tui.screens.preview import PreviewScreen
from tests.fakes.server import FakeProvider, Reply

from .conftest import SIZE, idle, settle, type_text
from .test_memory_screens import _wait_for
from .test_permission_modal import app_on


@pytest.fixture
def fake(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    with FakeProvider() as running:
        yield running


def apply(ids: list[int]) -> Reply:
    return Reply(tool_calls=[("filter_context", {"action": "apply", "mode": "forget",
                                                 "message_ids": ids})])


def clear() -> Reply:
    return Reply(tool_calls=[("slash", {"command": "clear", "args": ""})])


def tool_result_after(fake, user_text: str) -> str:
    """The tool result the LLM read in the request that followed its call, in the turn
    `user_text` opened (the last request holding that message and a tool result)."""
    for request in reversed(fake.requests):
        messages = request.body["messages"]
        if any(m["role"] == "user" and m["content"] == user_text for m in messages):
            tools = [m["content"] for m in messages if m["role"] == "tool"]
            if tools:
                return tools[-1]
    raise AssertionError(f"no request after a tool call in the turn of {user_text!r}")


def _previewing(app, other_than=None) -> bool:
    return isinstance(app.screen, PreviewScreen) and app.screen is not other_than


async def _say(app, pilot, text: str) -> None:
    await type_text(pilot, text)
    await pilot.press("enter")
    await _wait_for(pilot, lambda: not app.session.running(), f"the reply to {text!r}", timeout=90)


async def test_an_untick_in_the_modal_keeps_that_message(bench, tmp_path, fake):
    fake.queue(Reply(text="Hi."), Reply(text="Sunny."))
    app = app_on(bench, tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        session, root = app.session, app.focused_agent
        await _say(app, pilot, "hello")  # the first request imports litellm: slow
        await _say(app, pilot, "weather?")
        first = list((await session.replayer(root)).ctx)
        greeting = first[:2]  # "hello" and its reply
        fake.queue(apply(greeting), Reply(text="Done."))
        await type_text(pilot, "forget the greeting")
        await pilot.press("enter")
        await _wait_for(pilot, lambda: _previewing(app), "the preview", timeout=30)
        screen = app.screen
        label = session.tree.label(root)
        assert screen._title == f"The LLM of {label} asks to forget messages: untick what stays"
        assert screen.checked_ids == greeting  # listed as the LLM asked
        await pilot.press("space")  # untick the first: "hello" stays
        await pilot.pause(0.1)
        assert screen.checked_ids == greeting[1:]
        await pilot.press("enter")
        await _wait_for(pilot, lambda: not session.running(), "the turn's end", timeout=30)
        await idle(pilot)
        reply = json.loads(tool_result_after(fake, "forget the greeting"))
        assert reply["result"] == "edited"
        assert reply["ids_leaving"] == greeting[1:] and reply["kept_by_the_user"] == greeting[:1]
        events = await session.store.events(root)
        (event,) = [e for e in events if e.kind == "filter"]
        planning = event.payload["planning"]
        assert event.payload["ids"] == sorted(greeting[1:] + planning)
        assert min(planning) > max(first)  # the planning is this turn, nothing before
        # "hello" and the weather exchange stay; the reply to hello and this turn leave.
        assert list((await session.replayer(root)).ctx) == [greeting[0], *first[2:]]


async def test_two_agents_asking_at_once_queue(bench, tmp_path, fake):
    fake.queue(clear(), clear(), Reply(text="Done."), Reply(text="Done."))
    app = app_on(bench, tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        session, root = app.session, app.focused_agent
        said = {root: "Go, root.", (await session.command(root, "/fork --name kid")).data: "Go, kid."}
        child = list(said)[1]
        for agent_id, text in said.items():
            await session.say(agent_id, text)
        controller = session.context_review.reviewer.__self__
        await _wait_for(pilot, lambda: _previewing(app), "the first preview", timeout=90)
        await _wait_for(pilot, lambda: sum(controller.doings.reviews.values()) == 2,
                        "the second to wait", timeout=30)
        first = app.screen
        assert sum(isinstance(s, PreviewScreen) for s in app.screen_stack) == 1  # one at a time
        await pilot.press("ctrl+s")  # the first applied as asked
        await _wait_for(pilot, lambda: _previewing(app, first), "the second preview", timeout=30)
        second = app.screen
        assert sum(isinstance(s, PreviewScreen) for s in app.screen_stack) == 1
        await pilot.press("escape")  # the second refused
        await _wait_for(pilot, lambda: not session.running(), "both turns' end", timeout=30)
        await idle(pilot)
        titles = {first._title, second._title}
        assert titles == {f"The LLM of {session.tree.label(a)} asks to clear the context: "
                          "untick what stays" for a in (root, child)}
        accepted = root if session.tree.label(root) in first._title else child
        refused = child if accepted == root else root
        assert len((await session.replayer(accepted)).ctx) == 0
        assert len((await session.replayer(refused)).ctx) == 4  # its turn, whole
        results = {a: json.loads(tool_result_after(fake, said[a]).splitlines()[-1]) for a in said}
        assert results[accepted]["result"] == "applied"
        assert results[refused]["result"] == "refused"
        assert results[refused]["refused_by"] == "the user"
        for agent_id in said:
            events = await session.store.events(agent_id)
            assert [e.kind for e in events].count("clear") == (agent_id == accepted)
