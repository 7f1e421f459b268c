"""The memory tool through a real turn: the fake provider (behind real litellm) calls it,
the file is written under the configured folder, a `memory` event records who changed
what, /undo reverses the latest change (refusing if the file changed since), the files
survive /clear, and `memory_writes = "ask"` hands each change to a reviewer first."""

from __future__ import annotations

import json

import pytest

from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.memory.sandbox import MemoryLimits
from ikigai_tui.core.memory.service import MemorySettings, attach_memory
from ikigai_tui.core.commands.proposals import REFUSE, Verdict
from ikigai_tui.core.tools import tool_schemas
from tests.fakes.server import Reply

pytestmark = pytest.mark.parametrize("fmt", ["openai", "anthropic"], indirect=True)


def memory(**args):
    return Reply(tool_calls=[("memory", args)])


@pytest.fixture
def folder(tmp_path):
    return tmp_path / "mem"


@pytest.fixture
async def hm(make, folder):
    h = await make()
    attach_memory(h.session, MemorySettings(folder, MemoryLimits()))
    return h


async def results(h):
    return [e.payload["content"] for e in await h.events(kind="tool_result")]


async def test_the_llm_creates_a_memory_file_through_a_real_turn(hm, fake, folder, fmt):
    fake.queue(memory(command="create", path="/memories/notes/user.md",
                      file_text="Prefers tabs.\n"), Reply(text="Noted."))
    assert await hm.say("Remember that I prefer tabs.")
    assert (folder / "notes" / "user.md").read_text() == "Prefers tabs.\n"
    assert (await results(hm))[-1] == "File created successfully at: /memories/notes/user.md"
    (event,) = await hm.events(kind="memory")
    assert event.agent_id == hm.root
    assert event.payload["command"] == "create" and event.payload["path"] == "/memories/notes/user.md"
    assert event.payload["before"] is None and len(event.payload["after_sha256"]) == 64
    record = [e for e in await hm.events(kind="command") if e.id < event.id][-1]
    assert record.payload == {"text": "/memory create /memories/notes/user.md", "source": "llm",
                              "output": ["File created successfully at: /memories/notes/user.md"]}
    # The tool was offered in the request, with Anthropic's command set.
    offered = json.dumps(fake.requests[0].body)
    assert '"memory"' in offered and "str_replace" in offered
    await hm.assert_no_secret()


async def test_view_then_edit_then_undo_and_the_files_survive_clear(hm, fake, folder, fmt):
    folder.mkdir()
    (folder / "a.md").write_text("one\ntwo\n")
    fake.queue(memory(command="view", path="/memories"),
               memory(command="str_replace", path="/memories/a.md", old_str="two", new_str="2"),
               Reply(text="Done."))
    assert await hm.say("Fix my memory.")
    listing, edited = await results(hm)
    assert "/memories/a.md" in listing and edited.startswith("The memory file has been edited.")
    assert (folder / "a.md").read_text() == "one\n2\n"
    await hm.session.command(hm.root, "/clear")
    assert (folder / "a.md").read_text() == "one\n2\n"  # outside the log: /clear keeps it
    await hm.session.command(hm.root, "/undo")  # the /clear
    result = await hm.session.command(hm.root, "/undo")  # the memory change
    assert result.lines[0].startswith("Undid /memory str_replace /memories/a.md (made 20")
    assert "is back as it was" in result.lines[0]
    assert (folder / "a.md").read_text() == "one\ntwo\n"
    undo = (await hm.events(kind="undo"))[-1]
    assert undo.payload["target"] == (await hm.events(kind="memory"))[0].id


async def test_undo_refuses_when_the_file_changed_since_and_writes_nothing(hm, fake, folder, fmt):
    fake.queue(memory(command="create", path="/memories/a.md", file_text="x"), Reply(text="ok"))
    assert await hm.say("note it")
    (folder / "a.md").write_text("edited by hand")
    undos = len(await hm.events(kind="undo"))
    with pytest.raises(CommandError, match="changed since"):
        await hm.session.command(hm.root, "/undo")
    assert len(await hm.events(kind="undo")) == undos
    assert (folder / "a.md").read_text() == "edited by hand"


async def test_an_escape_from_the_llm_is_an_error_result_and_writes_nothing(hm, fake, folder,
                                                                           tmp_path, fmt):
    fake.queue(memory(command="create", path="/memories/../escaped.md", file_text="x"),
               memory(command="create", path="/memories-evil/x.md", file_text="x"),
               Reply(text="ok"))
    assert await hm.say("try")
    first, second = await results(hm)
    assert first.startswith("Error: the path /memories/../escaped.md uses '..'")
    assert second.startswith("Error: the path /memories-evil/x.md is outside /memories")
    assert not (tmp_path / "escaped.md").exists() and not (tmp_path / "memories-evil").exists()
    assert await hm.events(kind="memory") == []


async def test_ask_mode_hands_the_diff_to_the_reviewer(hm, fake, folder, fmt):
    service = attach_memory(hm.session, MemorySettings(folder, MemoryLimits(), writes="ask"))
    seen = []

    async def review(proposal):
        seen.append(proposal.preview_lines())
        return Verdict.accept() if len(seen) == 1 else REFUSE

    service.reviewer = review
    fake.queue(memory(command="create", path="/memories/a.md", file_text="yes\n"),
               memory(command="create", path="/memories/b.md", file_text="no\n"),
               Reply(text="ok"))
    assert await hm.say("remember two things")
    assert seen[0][0] == "Memory change: create /memories/a.md (4 bytes)"
    assert "+yes" in seen[0] and "+no" in seen[1]
    assert (folder / "a.md").exists() and not (folder / "b.md").exists()
    assert (await results(hm))[1] == "Error: the user refused this memory change; nothing was written"
    assert [e.payload["path"] for e in await hm.events(kind="memory")] == ["/memories/a.md"]


async def test_ask_mode_without_a_reviewer_refuses_writes_but_not_views(hm, fake, folder, fmt):
    attach_memory(hm.session, MemorySettings(folder, MemoryLimits(), writes="ask"))
    fake.queue(memory(command="create", path="/memories/a.md", file_text="x"),
               memory(command="view", path="/memories"), Reply(text="ok"))
    assert await hm.say("note")
    refused, listing = await results(hm)
    assert refused.startswith("Error: memory writes wait for the user's approval") and "--yes" in refused
    assert listing.startswith("Here're the files")
    assert not folder.exists() or not (folder / "a.md").exists()


def test_the_tool_is_registered_for_turns(fmt):
    names = [s["function"]["name"] for s in tool_schemas()]
    assert "memory" in names


async def test_repeated_undo_walks_back_through_memory_changes(hm, fake, folder, fmt):
    fake.queue(memory(command="create", path="/memories/a.md", file_text="one\n"),
               memory(command="insert", path="/memories/a.md", insert_line=1, insert_text="two"),
               memory(command="rename", old_path="/memories/a.md", new_path="/memories/b/a.md"),
               Reply(text="ok"))
    assert await hm.say("note, add, move")
    assert (folder / "b" / "a.md").read_text() == "one\ntwo\n"
    lines = [(await hm.session.command(hm.root, "/undo")).lines[0] for _ in range(3)]
    assert "/memories/b/a.md is back at /memories/a.md" in lines[0]
    assert not (folder / "b").exists()  # the folder the rename made goes too
    assert "/memories/a.md is back as it was" in lines[1]
    assert "/memories/a.md is removed again" in lines[2]
    assert sorted(p.name for p in folder.iterdir()) == []
    with pytest.raises(CommandError, match="nothing to undo"):
        await hm.session.command(hm.root, "/undo")
