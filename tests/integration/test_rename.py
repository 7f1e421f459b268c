"""/rename AGENT NAME (issue 27 item 7): a new name the tree, /send and --agent take, kept
across a restart (a `rename` event of the agent), the old name free again; a taken or
invalid name is one line and writes nothing."""

from __future__ import annotations

import json

import pytest

from ikigai_tui.core.errors import CommandError
from tests.integration.acceptance_helpers import Cli


async def test_rename_changes_the_name_everywhere_and_frees_the_old_one(make):
    h = await make()
    await h.session.command(h.root, "/fork --name scout")
    scout = next(a.id for a in h.session.tree if a.name == "scout")
    before = len(await h.store.events())
    result = await h.session.command(h.root, "/rename scout explorer")
    [line] = result.lines
    assert line.startswith("Renamed scout") and line.endswith(" to explorer.")
    assert h.session.tree[scout].name == "explorer"
    assert h.session.tree.resolve("explorer").id == scout
    events = (await h.store.events())[before:]
    assert [(e.agent_id, e.kind, e.payload) for e in events if e.kind == "rename"] == [
        (scout, "rename", {"name": "explorer", "previous": "scout"})]
    await h.session.command(h.root, "/send explorer hello there")  # the new name reaches it
    await h.session.command(h.root, "/fork --name scout")  # the old name is free again
    assert {a.name for a in h.session.tree} >= {"explorer", "scout"}
    # The agents table agrees (what another process or a restart reads).
    assert {a.id: a.name for a in await h.store.agents()}[scout] == "explorer"


@pytest.mark.parametrize("fmt", ["openai"], indirect=True)
async def test_a_taken_or_bad_name_is_one_line_and_writes_nothing(make):
    h = await make()
    await h.session.command(h.root, "/fork --name a1")
    await h.session.command(h.root, "/fork --name b1")
    before = len(await h.store.events())
    with pytest.raises(CommandError, match="already exists"):
        await h.session.command(h.root, "/rename a1 b1")
    with pytest.raises(CommandError, match="not a valid agent name"):
        await h.session.command(h.root, "/rename a1 9lives")
    with pytest.raises(Exception, match="nosuch"):
        await h.session.command(h.root, "/rename nosuch x1")
    assert len(await h.store.events()) == before


def test_a_rename_survives_a_restart_and_reads_in_the_log(tmp_path):
    cli = Cli(tmp_path / "r.db")
    cli.ok("/fork --name worker", "/rename worker builder")
    agents = cli.json("agents")
    assert sorted(a["name"] for a in agents if a.get("name")) == ["builder", "root"]
    builder = next(a["id"] for a in agents if a.get("name") == "builder")
    assert any(e["kind"] == "rename" for e in cli.log(builder))
    plain = cli("log", "--agent", "builder")
    assert plain.returncode == 0 and "rename: renamed worker to builder" in plain.stdout
    assert json.loads(cli("context", "--agent", "builder", "--json").stdout)["agent"]
