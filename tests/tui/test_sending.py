"""Sending from the input (issue 13, items 9, 10 and 16): a message typed while the agent
replies is queued (shown, sent when the reply ends, taken back with Esc or Up), sending
brings the view to the end, and `//` at the start sends a text that begins with `/`."""

from __future__ import annotations

import asyncio

from .conftest import (
    SIZE, agent_named, all_lines, conversation, events_of, idle, root_id, settle, type_text,
)


async def _wait_for(pilot, condition, *, timeout: float = 10.0, what: str = "condition") -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        assert loop.time() < deadline, f"timed out waiting for {what}"
        await pilot.pause(0.02)


async def _users(app, agent_id: str) -> list[str]:
    return [e.payload["content"] for e in await events_of(app, agent_id, "user")]


async def _slow_reply(app, pilot, text: str = "Tell me a long story.") -> str:
    """Send `text` from the input; returns once the agent is replying (a few seconds:
    the app runs with a delay of SLOW between words)."""
    root = app.focused_agent
    await _enter(pilot, text)
    await _wait_for(pilot, lambda: app.session.tree[root].status == "working", what="a reply")
    return root


async def _enter(pilot, text: str) -> None:
    """The text in the input, then Enter (typing it key by key would take a while)."""
    pilot.app.prompt_input.text = text
    await pilot.press("enter")


SLOW = 0.15


# ---- item 9: queued while the agent replies -----------------------------------------------


async def test_a_message_sent_while_the_agent_replies_is_queued_then_sent(bench):
    app = bench.app(delay=SLOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        root = await _slow_reply(app, pilot)
        await _enter(pilot, "And then?")
        await pilot.pause(0.1)
        assert app.prompt_input.text == ""
        assert app.session.tree[root].status == "working"
        assert await _users(app, root) == ["Tell me a long story."]  # not written yet
        queued = app.queued_line.render().plain
        assert app.queued_line.display and "Queued" in queued and "And then?" in queued
        assert not any(line.startswith("Error") for line in _lines(app))
        await idle(pilot, timeout=20)  # the reply ends; the queued message goes; its reply ends
        assert await _users(app, root) == ["Tell me a long story.", "And then?"]
        assert len(await events_of(app, root, "assistant")) == 2
        assert not app.queued_line.display


async def test_two_messages_queued_for_one_agent_are_sent_as_one(bench):
    app = bench.app(delay=SLOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        root = await _slow_reply(app, pilot)
        for text in ("First thought.", "Second thought."):
            await _enter(pilot, text)
        await idle(pilot, timeout=20)
        assert await _users(app, root) == ["Tell me a long story.",
                                           "First thought.\n\nSecond thought."]


async def test_escape_takes_the_queued_message_back_and_a_second_escape_stops_the_reply(bench):
    app = bench.app(delay=SLOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        root = await _slow_reply(app, pilot)
        await _enter(pilot, "Never mind.")
        await pilot.pause(0.05)
        assert app.queued_line.display
        await pilot.press("escape")
        await pilot.pause(0.05)
        assert app.prompt_input.text == "Never mind."
        assert not app.queued_line.display
        assert app.session.tree[root].status == "working"  # the reply goes on
        app.prompt_input.clear()
        await pilot.press("escape")  # nothing queued: stops the reply
        await idle(pilot)
        assert app.session.tree[root].status == "idle"
        assert await _users(app, root) == ["Tell me a long story."]


async def test_up_in_the_empty_input_takes_the_queued_message_back(bench):
    app = bench.app(delay=SLOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        root = await _slow_reply(app, pilot)
        await _enter(pilot, "Edit me.")
        await pilot.pause(0.05)
        await pilot.press("up")
        await pilot.pause(0.05)
        assert app.prompt_input.text == "Edit me."
        assert not app.queued_line.display
        app.prompt_input.clear()
        await idle(pilot, timeout=20)
        assert await _users(app, root) == ["Tell me a long story."]  # nothing else sent
        await pilot.press("up")  # no queue: the history, as before
        assert app.prompt_input.text == "Edit me."


async def test_the_queued_line_follows_the_focused_agent(bench):
    async with bench.prep() as session:
        await session.command(root_id(session), "/fork --name kid")
        await session.wait_idle()
    app = bench.app(delay=SLOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        root = await _slow_reply(app, pilot)
        await _enter(pilot, "Queued for the root.")
        await pilot.pause(0.05)
        assert app.queued_line.display
        await pilot.press("alt+down")  # to the kid: nothing queued for it
        await pilot.pause(0.1)
        assert not app.queued_line.display
        await pilot.press("alt+up")
        await pilot.pause(0.1)
        assert app.focused_agent == root
        assert app.queued_line.display or "Queued for the root." in await _users(app, root)


# ---- item 10: sending while scrolled up ------------------------------------------------------


async def _app_over_a_long_chat(bench):
    """The app over 20 long messages: more than a screen, the view at the end."""
    async with bench.prep() as session:
        await conversation(session, *[f"Message {n}: " + "words " * 60 for n in range(20)])
    return bench.app()


async def test_sending_while_scrolled_up_brings_the_view_to_the_end(bench):
    app = await _app_over_a_long_chat(bench)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        sb = app.panes.active.scrollback
        await pilot.press("pageup", "pageup")
        await idle(pilot)
        assert not sb.following and sb.scroll_y < sb.max_scroll_y
        await type_text(pilot, "Back to the end?")
        await pilot.press("enter")
        await idle(pilot)
        assert sb.following and sb.scroll_y == sb.max_scroll_y
        shown = "\n".join(sb.render_line(y).text for y in range(sb.size.height))
        assert "Back to the end?" in shown


async def test_a_command_sent_while_scrolled_up_brings_the_view_to_the_end(bench):
    app = await _app_over_a_long_chat(bench)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        sb = app.panes.active.scrollback
        await pilot.press("pageup", "pageup")
        await idle(pilot)
        await type_text(pilot, "/mark here")
        await pilot.press("enter")
        await idle(pilot)
        assert sb.following and sb.scroll_y == sb.max_scroll_y
        assert "Checkpoint 'here' created." in "\n".join(
            sb.render_line(y).text for y in range(sb.size.height))


# ---- item 16: a message that begins with / -------------------------------------------------------


async def test_a_double_slash_sends_a_message_that_begins_with_a_slash(bench):
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        root = app.focused_agent
        await type_text(pilot, "//usr/bin/python is broken")
        await pilot.press("enter")
        await idle(pilot)
        assert await _users(app, root) == ["/usr/bin/python is broken"]
        assert not any(line.startswith("Error") for line in _lines(app))


def _lines(app) -> list[str]:
    return [strip.text for strip in app.panes.active.scrollback._lines]


# ---- refused before it is written: the text stays (issue 23, item 10) ------------------------


async def test_a_message_refused_for_want_of_a_key_stays_in_the_input(bench):
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        root = app.focused_agent
        await _enter(pilot, "/model gpt-4o")  # no key in the tests' environment
        await idle(pilot)
        lines = all_lines(app.panes.active.scrollback)
        assert any("OPENAI_API_KEY is not set: messages to openai/gpt-4o will fail" in line
                   for line in lines), lines  # said now, before any message
        await _enter(pilot, "a question to fix\nover two lines")
        await idle(pilot)
        assert await _users(app, root) == []  # nothing written
        assert app.prompt_input.text == "a question to fix\nover two lines"
        errors = [line for line in all_lines(app.panes.active.scrollback)
                  if line.lstrip().startswith("Error: OPENAI_API_KEY is not set")]
        assert len(errors) == 1


async def test_a_message_to_a_dead_agent_stays_in_the_input(bench):
    async with bench.prep() as session:
        await session.command(root_id(session), "/fork --name kid")
        await session.command(root_id(session), "/kill kid")
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        kid = agent_named(app.session, "kid")
        await app.focus_agent(kid)
        await idle(pilot)
        await _enter(pilot, "are you there?")
        await idle(pilot)
        assert await _users(app, kid) == []
        assert app.prompt_input.text == "are you there?"
        assert any("is dead" in line for line in all_lines(app.panes.active.scrollback))


async def test_an_input_growing_a_line_keeps_the_followed_end_in_view(bench):
    """The panes are a row shorter when the input below them grows a line (Ctrl+J): a pane
    following its end keeps its last line in view, not hidden until the next reply."""
    app = await _app_over_a_long_chat(bench)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        sb = app.panes.active.scrollback
        assert sb.following and sb.scroll_y == sb.max_scroll_y
        height = sb.size.height
        await type_text(pilot, "two")
        await pilot.press("ctrl+j")
        await type_text(pilot, "lines")
        await idle(pilot)
        assert sb.size.height < height  # the input took a row from the pane
        assert sb.following and sb.scroll_y == sb.max_scroll_y
