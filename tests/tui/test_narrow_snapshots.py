"""Snapshots of the app at 80x24, a common small terminal (SVGs in
<root>/snapshots/test_narrow_snapshots/): the tree takes a third at most, two panes
side by side wrap their words, F4 gives the panes the whole width, and a message queued
while the agent replies shows above the input.

Update with `pytest tests/tui/test_narrow_snapshots.py --snapshot-update`, then look at
every changed SVG before committing it.
"""

from __future__ import annotations

from .conftest import agent_named, idle, root_id, say, settle

NARROW = (80, 24)


async def _family(session) -> None:
    root = root_id(session)
    await say(session, root, "Plan a **small** garden: what grows well in shade?")
    await session.command(root, "/mark plan")
    await session.command(root, "/fork --name ferns Which ferns suit a north wall?")
    await session.command(root, "/fork --name moss")
    await session.wait_idle()


def test_narrow_layout(bench, snap_compare):
    """80x24: the tree is 24 columns (30%), the conversation wraps in the rest."""
    bench.prepare(_family)
    app = bench.app()

    async def run_before(pilot):
        await settle(pilot)
        assert app.agent_tree.region.width == 24
        assert len(list(app.session.tree)) == 3

    assert snap_compare(app, terminal_size=NARROW, run_before=run_before)


def test_narrow_split(bench, snap_compare):
    """80x24, F2: the root and its first child side by side, the new pane active."""
    bench.prepare(_family)
    app = bench.app()

    async def run_before(pilot):
        await settle(pilot)
        await pilot.press("f2")
        await idle(pilot)
        assert [p.agent_id for p in app.panes.all()] == [
            root_id(app.session), agent_named(app.session, "ferns")]
        assert app.panes.active.agent_id == agent_named(app.session, "ferns")

    assert snap_compare(app, terminal_size=NARROW, run_before=run_before)


def test_narrow_tree_hidden(bench, snap_compare):
    """80x24, F4: the tree hidden, the pane takes the whole width."""
    bench.prepare(_family)
    app = bench.app()

    async def run_before(pilot):
        await settle(pilot)
        await pilot.press("f4")
        await idle(pilot)
        assert not app.agent_tree.display

    assert snap_compare(app, terminal_size=NARROW, run_before=run_before)


def test_narrow_queued_message(bench, snap_compare):
    """80x24: a message sent while the agent replies waits above the input (the reply is
    held back by the test, so the picture is always the same)."""
    bench.prepare(_family)
    app = bench.app()

    async def run_before(pilot):
        await settle(pilot)
        root = app.focused_agent
        app.outbox.put(root, "And which flowers?")
        app.show_queued()
        await idle(pilot)
        assert app.queued_line.display

    assert snap_compare(app, terminal_size=NARROW, run_before=run_before)
