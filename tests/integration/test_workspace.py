"""The workspace per agent (issue 25 item 1): /cwd writes a `cwd` event the replay keeps,
a fork inherits it, a restart keeps it, /context and `context --json` show it, --cwd sets
the root's, and a turn through the fake provider (behind real litellm) reads a file of it
with read_file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ikigai_tui.cli.output import context_data
from ikigai_tui.core.errors import CommandError
from tests.fakes.server import Reply

pytestmark = pytest.mark.parametrize("fmt", ["openai"], indirect=True)


@pytest.fixture
def folders(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    (a / "sub").mkdir(parents=True)
    b.mkdir()
    return a, b


async def test_cwd_writes_an_event_and_sets_the_workspace(make, folders, fmt):
    a, b = folders
    h = await make(settings_of_session={"workspace": str(a)})
    assert h.session.workspace(h.root) == a  # the default: the folder it was started in
    shown = await h.session.command(h.root, "/cwd")
    assert shown.lines == [f"Workspace: {a} (the folder ikigai was started in)"]
    result = await h.session.command(h.root, "/cwd sub")  # relative to the workspace
    assert result.lines == [f"Workspace set to {a / 'sub'} (was {a})."]
    (event,) = await h.events(kind="cwd")
    assert event.payload == {"path": str(a / "sub"), "previous": str(a)}
    assert h.session.workspace(h.root) == a / "sub"
    await h.session.command(h.root, f"/cwd {b}")
    assert h.session.workspace(h.root) == b


async def test_a_missing_folder_is_refused_in_one_line_and_nothing_is_written(make, folders, fmt):
    a, _b = folders
    h = await make(settings_of_session={"workspace": str(a)})
    with pytest.raises(CommandError) as refused:
        await h.session.command(h.root, "/cwd nowhere")
    assert str(refused.value) == f"{a / 'nowhere'} does not exist; the workspace stays {a}"
    (a / "file.txt").write_text("x")
    with pytest.raises(CommandError, match="is not a folder"):
        await h.session.command(h.root, "/cwd file.txt")
    assert not await h.events(kind="cwd")
    assert h.session.workspace(h.root) == a


async def test_a_fork_inherits_the_workspace_at_the_fork(make, folders, fmt):
    a, b = folders
    h = await make(settings_of_session={"workspace": str(a)})
    await h.session.command(h.root, f"/cwd {b}")
    await h.session.command(h.root, "/fork --name kid")
    kid = next(x.id for x in h.session.tree if x.name == "kid")
    await h.session.replayer(kid)
    assert h.session.workspace(kid) == b
    shown = await h.session.command(kid, "/cwd")
    assert shown.lines == [f"Workspace: {b} (inherited at fork)"]
    await h.session.command(h.root, f"/cwd {a}")  # the parent's later change stays its own
    assert h.session.workspace(kid) == b and h.session.workspace(h.root) == a


async def test_a_restart_keeps_the_workspace(make, folders, tmp_path, fmt):
    a, b = folders
    h = await make(settings_of_session={"workspace": str(a)})
    await h.session.command(h.root, f"/cwd {b}")
    await h.session.command(h.root, "/fork --name kid")
    await h.session.close()
    await h.store.close()
    h.closed = True
    again = await make(path=h.path, settings_of_session={"workspace": str(tmp_path)})
    kid = next(x.id for x in again.session.tree if x.name == "kid")
    for agent in (again.root, kid):
        await again.session.replayer(agent)
        assert again.session.workspace(agent) == b


async def test_context_shows_the_workspace(make, folders, fmt):
    a, b = folders
    h = await make(settings_of_session={"workspace": str(a)})
    lines = (await h.session.command(h.root, "/context")).lines
    assert f"Workspace: {a} (the folder ikigai was started in)" in lines
    data = await context_data(h.session, h.session.tree[h.root])
    assert (data["workspace"], data["workspace_source"]) == (str(a), "start")
    await h.session.command(h.root, f"/cwd {b}")
    lines = (await h.session.command(h.root, "/context")).lines
    assert f"Workspace: {b} (set with /cwd or --cwd)" in lines
    data = await context_data(h.session, h.session.tree[h.root])
    assert (data["workspace"], data["workspace_source"]) == (str(b), "cwd")


async def test_a_turn_reads_a_file_of_its_workspace(make, fake, folders, fmt):
    a, b = folders
    (b / "notes.txt").write_text("the answer is 42\n")
    (a / "notes.txt").write_text("the wrong folder\n")
    h = await make(settings_of_session={"workspace": str(a)})
    await h.session.command(h.root, f"/cwd {b}")
    fake.queue(Reply(tool_calls=[("read_file", {"path": "notes.txt"})]), Reply(text="42."))
    assert await h.say("What is the answer?")
    (result,) = [e.payload for e in await h.events(kind="tool_result")]
    assert result["content"] == "     1\tthe answer is 42" and not result.get("is_error")
    # The tool was offered, and its result went back to the model.
    assert '"read_file"' in json.dumps(fake.requests[0].body)
    assert "the answer is 42" in json.dumps(fake.requests[1].body)


def _ikigai(args: list[str], cwd: Path, stdin: str = "") -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("IKIGAI_")}
    env["IKIGAI_CONFIG"] = str(cwd / "none.toml")
    return subprocess.run([sys.executable, "-m", "ikigai_tui", *args], cwd=cwd, input=stdin,
                          capture_output=True, text=True, timeout=60, env=env)


def test_the_cwd_flag_sets_the_roots_workspace_and_it_is_kept(tmp_path, folders, fmt):
    a, b = folders
    db = str(tmp_path / "x.db")
    first = _ikigai(["--db", db, "--cwd", str(b), "run"], cwd=a, stdin="/cwd\n")
    assert first.stdout.splitlines() == [f"Workspace: {b} (set with /cwd or --cwd)"], first.stderr
    again = _ikigai(["--db", db, "run"], cwd=a, stdin="/cwd\n")  # started elsewhere: kept
    assert again.stdout.splitlines() == [f"Workspace: {b} (set with /cwd or --cwd)"], again.stderr
    report = json.loads(_ikigai(["--db", db, "context", "--json"], cwd=a).stdout)
    assert report["workspace"] == str(b) and report["workspace_source"] == "cwd"
    log = _ikigai(["--db", db, "log"], cwd=a).stdout
    assert log.count(" cwd: ") == 1  # one event: the second start changed nothing
    missing = _ikigai(["--db", db, "--cwd", str(tmp_path / "nope"), "run"], cwd=a)
    assert missing.returncode == 2 and "does not exist" in missing.stderr
