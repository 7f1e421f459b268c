"""Snapshots of what each agent sees (issue 13): messages out of the context drawn apart,
the same hidden (F8), each message's id (F9), in a light theme too. SVGs in
<root>/snapshots/test_context_snapshots/; update with --snapshot-update and look at each.
The welcome of a new agent is test_snapshots.py's test_first_start_offline."""

from __future__ import annotations

from ikigai_tui.tui.render import OUTSIDE_BAR

from .conftest import SIZE, all_lines, conversation, root_id, settle


async def _rewound_forgotten_cleared(session) -> None:
    root = root_id(session)
    await conversation(session, "Hello there, what's the plan for today?")
    await session.command(root, "/mark alpha")
    await conversation(session, "Tell me about marks.")
    await session.command(root, "/rewind alpha")
    await conversation(session, "Something to forget.", "And about forks?")
    users = [e.id for e in await session.store.events(root) if e.kind == "user"]
    await session.command(root, f"/forget --ids {users[2]}")
    await session.command(root, "/clear")
    await conversation(session, "How does the sliding window work?")


def test_out_of_context_messages(bench, snap_compare):
    """Rewound, forgotten and cleared messages: a bar at their left, dimmed, a line above
    each run saying why; the last exchange, in the context, as always."""
    bench.prepare(_rewound_forgotten_cleared)
    app = bench.app()

    async def run_before(pilot):
        await settle(pilot)
        lines = all_lines(app.panes.active.scrollback)
        assert sum(line.startswith("⊘") for line in lines) == 4
        assert any(line.startswith(OUTSIDE_BAR) for line in lines)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_out_of_context_messages_hidden(bench, snap_compare):
    """F8: each run of them is one line saying how many, why, and that F8 shows them."""
    bench.prepare(_rewound_forgotten_cleared)
    app = bench.app()

    async def run_before(pilot):
        await settle(pilot)
        await pilot.press("f8")
        await settle(pilot)
        lines = all_lines(app.panes.active.scrollback)
        assert not any(line.startswith(OUTSIDE_BAR) for line in lines)
        assert any("hidden (F8 shows them)" in line for line in lines)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_message_ids_shown(bench, snap_compare):
    """F9: each message's id in a gutter at the left (commands have none)."""
    bench.prepare(_rewound_forgotten_cleared)
    app = bench.app()

    async def run_before(pilot):
        await settle(pilot)
        await pilot.press("f9")
        await settle(pilot)
        assert app.panes.active.scrollback.look.id_width > 0

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_out_of_context_in_a_light_theme(bench, snap_compare):
    """The same in textual-light: every colour from the theme, the user's messages dark."""
    bench.prepare(_rewound_forgotten_cleared)
    app = bench.app()

    async def run_before(pilot):
        app.theme = "textual-light"
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
