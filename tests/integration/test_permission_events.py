"""Permissions through real turns (issue 25 item 3), the fake provider behind real
litellm calling a fake `shell` tool: "always for this agent" is a `permission` event, a
fork inherits it, /undo withdraws it; a refusal is the tool's result and the turn ends
normally; the config's deny wins; headless `run` and `-p` refuse `ask` tools unless
`--allow TOOL` or `--yes`."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ikigai_tui.core.tools.permissions import (
    ALWAYS, ONCE, REFUSE, PermissionAnswer, PermissionService, Rules,
)
from ikigai_tui.core.session import Session, SessionSettings
from ikigai_tui.llm.providers import Providers
from tests.fakes.server import FakeProvider, Reply
from tests.fakes.tools import Shell, install

openai = pytest.mark.parametrize("fmt", ["openai"], indirect=True)


def run(command: str) -> Reply:
    return Reply(tool_calls=[("run", {"command": command})])


class Asked:
    """A reviewer that answers from a list and remembers each request."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.requests: list = []

    async def __call__(self, request):
        self.requests.append(request)
        return PermissionAnswer(self.answers.pop(0))


@pytest.fixture
def shell(monkeypatch) -> Shell:
    tool = Shell()
    install(monkeypatch, tool)
    return tool


async def results(h, agent_id=None):
    return [e.payload["content"] for e in await h.events(agent_id, kind="tool_result")]


@openai
async def test_always_is_an_event_that_stops_the_asking(h, fake, shell):
    asked = Asked(ALWAYS)
    h.session.permissions.reviewer = asked
    fake.queue(run("make test"), run("make lint"), Reply(text="Both ran."))
    assert await h.say("Test and lint.")
    assert shell.ran == [(h.root, "make test"), (h.root, "make lint")]
    (request,) = asked.requests  # the second call was not asked about
    assert request.agent_id == h.root and request.agent == h.session.tree.label(h.root)
    assert request.tool == "run" and request.description == "$ make test\n(in /work/project)"
    (event,) = await h.events(kind="permission")
    assert event.agent_id == h.root and event.payload == {"tool": "run", "rule": "allow"}
    call = (await h.events(kind="tool_call"))[0]
    assert call.id < event.id < (await h.events(kind="tool_result"))[0].id
    assert await results(h) == ["ran: make test", "ran: make lint"]


@openai
async def test_a_fork_inherits_the_grant_and_undo_withdraws_it(h, fake, shell):
    session, root = h.session, h.root
    asked = Asked(ALWAYS)
    session.permissions.reviewer = asked
    fake.queue(run("ls"), Reply(text="Listed."))
    assert await h.say("List.")
    child = (await session.command(root, "/fork --name kid")).data
    # The child runs it without asking: the grant came with the fork.
    fake.queue(run("ls kid"), Reply(text="Listed."))
    assert await h.say("List again.", child)
    assert len(asked.requests) == 1 and shell.ran[-1] == (child, "ls kid")
    # /undo in the parent withdraws its grant: it asks again; the child keeps its copy.
    result = await session.command(root, "/undo")
    assert result.lines[0].startswith("Undid always allow run for this agent (made ")
    assert "run is no longer always allowed for this agent" in result.lines[0]
    asked.answers.append(REFUSE)
    fake.queue(run("rm -rf build"), Reply(text="Refused, then."))
    assert await h.say("Clean.")
    assert len(asked.requests) == 2 and asked.requests[-1].agent_id == root
    assert (root, "rm -rf build") not in shell.ran
    fake.queue(run("ls kid again"), Reply(text="Listed."))
    assert await h.say("Once more.", child)
    assert len(asked.requests) == 2 and shell.ran[-1] == (child, "ls kid again")
    # The child's own grant, after the fork, never reaches the parent; and it survives a
    # fresh replay of the log.
    assert (await session.replayer(child)).base.granted == (("run", "allow"),)
    assert (await session.replayer(root)).granted == []  # undone
    # Replayed from the log alone (another process): the same.
    other = await Session.open(h.store, Providers(), SessionSettings())
    try:
        assert (await other.replayer(child)).base.granted == (("run", "allow"),)
        assert (await other.replayer(root)).granted == []
    finally:
        await other.close()


@openai
async def test_a_childs_grant_stays_its_own(h, fake, shell):
    session, root = h.session, h.root
    child = (await session.command(root, "/fork")).data
    asked = Asked(ALWAYS, REFUSE)
    session.permissions.reviewer = asked
    fake.queue(run("make"), Reply(text="Made."))
    assert await h.say("Make.", child)
    fake.queue(run("make"), Reply(text="Refused."))
    assert await h.say("Make.", root)
    assert [r.agent_id for r in asked.requests] == [child, root]
    assert shell.ran == [(child, "make")]


@openai
async def test_a_refusal_is_the_tool_result_and_the_turn_ends_normally(h, fake, shell):
    h.session.permissions.reviewer = Asked(REFUSE, ONCE)
    fake.queue(run("rm -rf /"), Reply(text="You refused; fine."))
    assert await h.say("Clean up.")
    assert shell.ran == []
    (refused,) = await results(h)
    assert refused == "Error: the user refused run; it did not run"
    (result,) = await h.events(kind="tool_result")
    assert result.payload.get("is_error") is True
    assert (await h.context())[-1][2]["content"] == "You refused; fine."
    sent = json.dumps(fake.requests[-1].body)
    assert "the user refused run" in sent  # the LLM saw it
    assert await h.events(kind="permission") == []
    fake.queue(run("ls"), Reply(text="Ran once."))
    assert await h.say("Just list.")
    assert shell.ran == [(h.root, "ls")]
    assert await h.events(kind="permission") == []  # once is not recorded


@openai
async def test_nobody_to_ask_refuses_and_the_config_deny_wins(h, fake, shell):
    fake.queue(run("ls"), Reply(text="No reviewer."))
    assert await h.say("List.")
    assert (await results(h))[-1].startswith("Error: the user refused run (nobody is here")
    h.session.permissions = PermissionService(Rules({"r*": "deny"}))
    asked = Asked(ALWAYS)
    h.session.permissions.reviewer = asked
    fake.queue(run("ls"), Reply(text="Denied."))
    assert await h.say("List.")
    assert (await results(h))[-1] == "Error: the user's rules deny run; it did not run"
    assert asked.requests == [] and shell.ran == []
    # A grant recorded in the log does not lift the config's deny either.
    await h.session.commit(_grant(h.root))
    fake.queue(run("ls"), Reply(text="Still denied."))
    assert await h.say("List.")
    assert (await results(h))[-1] == "Error: the user's rules deny run; it did not run"


def _grant(agent_id: str):
    from ikigai_tui.core.events import WriteBatch

    batch = WriteBatch()
    batch.add(agent_id, "permission", {"tool": "run", "rule": "allow"})
    return batch


# -- headless ---------------------------------------------------------------------------


def ikigai(tmp_path, fake, *args: str) -> subprocess.CompletedProcess:
    """The real command line in a fresh interpreter, with the fake tools registered."""
    import os

    env = {**os.environ, "OPENAI_API_KEY": "test-key", "FAKE_TOOLS_DIR": str(tmp_path)}
    return subprocess.run(
        [sys.executable, "-m", "tests.fakes.tools", "--db", str(tmp_path / "p.db"),
         "--model", "openai/x", "--api-base", fake.openai_base, *args],
        capture_output=True, text=True, env=env, timeout=60)


@pytest.fixture
def sync_fake():
    with FakeProvider() as running:
        yield running


def write(path: str, content: str) -> Reply:
    return Reply(tool_calls=[("write", {"path": path, "content": content})])


def test_headless_run_refuses_without_yes_and_the_turn_ends(tmp_path, sync_fake):
    sync_fake.queue(write("a.txt", "hello"), Reply(text="I was refused."))
    (tmp_path / "in.txt").write_text("write it\n")
    done = ikigai(tmp_path, sync_fake, "run", "--script", str(tmp_path / "in.txt"))
    assert done.returncode == 0, done.stderr
    assert "<- Error: the user refused write (not allowed without a screen: run with " \
           "--allow write or --yes to allow it); it did not run" in done.stdout
    assert "I was refused." in done.stdout
    assert not (tmp_path / "a.txt").exists()


def test_headless_allow_lets_it_run_and_prints_what_ran(tmp_path, sync_fake):
    sync_fake.queue(write("a.txt", "hello"), Reply(text="Written."),
                    run("make"), Reply(text="Refused."))
    (tmp_path / "in.txt").write_text("write it\nrun make\n")
    done = ikigai(tmp_path, sync_fake, "run", "--script", str(tmp_path / "in.txt"),
                  "--allow", "wr*", "--allow", "other")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "a.txt").read_text() == "hello"
    assert "<- wrote a.txt" in done.stdout
    assert "write allowed by --allow wr*:" in done.stderr and "  +hello" in done.stderr
    assert "<- Error: the user refused run (not allowed without a screen" in done.stdout


def test_print_mode_yes_allows_every_ask(tmp_path, sync_fake):
    sync_fake.queue(write("b.txt", "yes"), Reply(text="Written."))
    done = ikigai(tmp_path, sync_fake, "-p", "write b", "--yes")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "b.txt").read_text() == "yes"
    assert "write allowed by --yes:" in done.stderr
    misplaced = subprocess.run([sys.executable, "-m", "ikigai_tui", "--allow", "bash"],
                               capture_output=True, text=True, timeout=60)
    assert misplaced.returncode == 2
    assert "--allow goes with -p PROMPT, `ask` or `run`" in misplaced.stderr
