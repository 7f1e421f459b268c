"""Snapshots of the cursor mode (F7): the selected entry highlighted with its bar over
the pane's last line, and the action menu (Enter), at 120x40 and 80x24 (SVGs in
<root>/snapshots/test_cursor_snapshots/).

Update with `pytest tests/tui/test_cursor_snapshots.py --snapshot-update`, then look at
every changed SVG before committing it."""

from __future__ import annotations

from .conftest import idle, root_id, say, settle


async def _talk(session) -> None:
    root = root_id(session)
    await say(session, root, "Plan a **small** garden: what grows well in shade?")
    await say(session, root, "And along a north wall?")
    await session.wait_idle()


def _run(bench, snap_compare, size, keys):
    bench.prepare(_talk)
    app = bench.app()

    async def run_before(pilot):
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await idle(pilot)
        assert app.panes.active.scrollback.cursor is not None

    return snap_compare(app, terminal_size=size, run_before=run_before)


def test_cursor_mode_bar(bench, snap_compare):
    """F7, Up: the user's last question selected, its bar at the bottom of the pane."""
    assert _run(bench, snap_compare, (120, 40), ["f7", "up"])


def test_cursor_menu(bench, snap_compare):
    """Enter: the menu of the actions, restore disabled (the entry is in the context)."""
    assert _run(bench, snap_compare, (120, 40), ["f7", "up", "enter"])


def test_cursor_mode_narrow(bench, snap_compare):
    assert _run(bench, snap_compare, (80, 24), ["f7", "up", "up"])
