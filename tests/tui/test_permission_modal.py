"""The permission modal (issue 25 item 3), driven by keys (Pilot) in real turns (the fake
provider behind real litellm calling a fake `shell` tool): y runs the call once, n
refuses it (the LLM reads so), a allows it always for this agent (a `permission` event,
no more asking); two agents asking at once get one modal at a time, each naming its
agent. Snapshots (SVGs in <root>/snapshots/test_permission_modal/): the modal with a
command, and with a diff."""

from __future__ import annotations

import dataclasses

import pytest

from ikigai_tui.core.tools.permissions import PermissionRequest
from ikigai_tui.runtime import create_app, open_session
from ikigai_tui.tui.screens.permission import PermissionScreen
from tests.fakes.server import FakeProvider, Reply
from tests.fakes.tools import Shell, install

from .conftest import DB_LABEL, SIZE, idle, make_config, settle, type_text
from .test_memory_screens import _wait_for


@pytest.fixture
def fake():
    with FakeProvider() as running:
        yield running


@pytest.fixture
def shell(monkeypatch) -> Shell:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    tool = Shell()
    install(monkeypatch, tool)
    return tool


def app_on(bench, tmp_path, fake=None):
    config = make_config(bench.db, tmp_path)
    if fake is not None:
        config = dataclasses.replace(config, model="openai/x", api_base=fake.openai_base)
    return create_app(config, db_label=DB_LABEL,
                      session_factory=lambda c: open_session(c, new_id=bench.new_id))


def run(command: str) -> Reply:
    return Reply(tool_calls=[("run", {"command": command})])


def _asking(app, other_than=None) -> bool:
    screen = app.screen
    return (isinstance(screen, PermissionScreen) and screen is not other_than
            and bool(screen.query("#permission-text")))


async def test_yes_no_and_always(bench, tmp_path, fake, shell):
    fake.queue(run("make one"), run("make two"), run("make three"), run("make four"),
               Reply(text="Done."))
    app = app_on(bench, tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        root = app.focused_agent
        await type_text(pilot, "Make everything.")
        await pilot.press("enter")
        # The first request imports litellm: slow on a busy machine.
        await _wait_for(pilot, lambda: _asking(app), "the first request", timeout=90)
        first = app.screen
        assert first.request.agent_id == root and first.request.tool == "run"
        shown = str(first.query_one("#permission-text").render())
        assert "$ make one" in shown and "(in /work/project)" in shown  # describe(), verbatim
        assert app.session.tree.label(root) in str(first.query_one("#permission-who").render())
        assert shell.ran == []  # nothing before the answer
        await pilot.press("y")
        await _wait_for(pilot, lambda: _asking(app, first), "the second request")
        second = app.screen
        assert shell.ran == [(root, "make one")]
        await pilot.press("n")
        await _wait_for(pilot, lambda: _asking(app, second), "the third request")
        await pilot.press("a")
        await _wait_for(pilot, lambda: not app.session.running(), "the turn's end")
        await idle(pilot)
        assert not isinstance(app.screen, PermissionScreen)  # the fourth was not asked
        assert shell.ran == [(root, "make one"), (root, "make three"), (root, "make four")]
        events = await app.session.store.events(root)
        results = [e.payload["content"] for e in events if e.kind == "tool_result"]
        assert results == ["ran: make one", "Error: the user refused run; it did not run",
                           "ran: make three", "ran: make four"]
        assert [e.payload for e in events if e.kind == "permission"] == [
            {"tool": "run", "rule": "allow"}]


async def test_escape_refuses(bench, tmp_path, fake, shell):
    fake.queue(run("rm -rf build"), Reply(text="Refused."))
    app = app_on(bench, tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await type_text(pilot, "Clean.")
        await pilot.press("enter")
        await _wait_for(pilot, lambda: _asking(app), "the request", timeout=90)
        await pilot.press("escape")
        await _wait_for(pilot, lambda: not app.session.running(), "the turn's end")
        assert shell.ran == []


async def test_two_agents_asking_at_once_queue(bench, tmp_path, fake, shell):
    fake.queue(run("from one"), run("from two"), Reply(text="Done."), Reply(text="Done."))
    app = app_on(bench, tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        session = app.session
        root = app.focused_agent
        child = (await session.command(root, "/fork --name kid")).data
        await session.say(root, "Go.")
        await session.say(child, "Go.")
        await _wait_for(pilot, lambda: _asking(app), "the first request", timeout=90)
        controller = session.permissions.reviewer.__self__
        await _wait_for(pilot, lambda: controller._permission_waiting == 1, "the second to wait")
        first = app.screen
        # One modal at a time: the second waits behind it.
        assert sum(isinstance(s, PermissionScreen) for s in app.screen_stack) == 1
        who = [str(first.query_one("#permission-who").render())]
        await pilot.press("y")
        await _wait_for(pilot, lambda: _asking(app, first), "the second request")
        second = app.screen
        who.append(str(second.query_one("#permission-who").render()))
        assert {first.request.agent_id, second.request.agent_id} == {root, child}
        for screen, line in zip((first, second), who):  # each names its agent
            label = session.tree.label(screen.request.agent_id)
            assert screen.request.agent == label and line.startswith(f"{label} wants to run run")
        assert "kid" in session.tree.label(child)
        await pilot.press("y")
        await _wait_for(pilot, lambda: not session.running(), "both turns' end")
        assert sorted(agent for agent, _command in shell.ran) == sorted([root, child])


COMMAND = PermissionRequest("a1b2c1", "root", "bash", "shell",
                            "$ pytest -x tests/unit -k 'not slow'\n(in /home/me/project)")
DIFF = PermissionRequest(
    "a1b2c2", "kid", "edit_file", "write",
    "--- src/app.py\n+++ src/app.py\n@@ -1,3 +1,3 @@\n import sys\n-DEBUG = True\n"
    "+DEBUG = False\n print(sys.argv)")


@pytest.mark.parametrize("request_", [COMMAND, DIFF], ids=["command", "diff"])
def test_permission_modal(bench, tmp_path, snap_compare, request_):
    app = app_on(bench, tmp_path)

    async def run_before(pilot):
        await settle(pilot)
        app.push_screen(PermissionScreen(request_, waiting=1 if request_ is DIFF else 0))
        await idle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
