"""/history in the TUI (issue 28, item 4): the list of the agent's context changes opens
after its lines; Enter on one asks, then takes the context back to just before it through
`/undo --to ID`; "Keep" and Esc write nothing; undone changes cannot be chosen."""

from __future__ import annotations

from textual.widgets import OptionList

from ikigai_tui.tui.screens.confirm import ConfirmScreen
from ikigai_tui.tui.screens.history import HistoryScreen

from .conftest import SIZE, conversation, events_of, idle, root_id, settle, type_text


async def _changes(session) -> dict[str, int]:
    root = root_id(session)
    await conversation(session, "alpha", "beta", "gamma")
    users = {e.payload["content"]: e.id for e in await session.store.events(root)
             if e.kind == "user"}
    await session.command(root, f"/forget --ids {users['alpha']}")
    await session.command(root, "/pin a note")
    await session.command(root, "/clear")
    return users


async def _open(pilot) -> None:
    await settle(pilot)
    await type_text(pilot, "/history")
    await pilot.press("enter")
    await idle(pilot)


async def test_enter_undoes_back_to_the_chosen_change(bench):
    async with bench.prep() as session:
        users = await _changes(session)
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await _open(pilot)
        screen = app.screen
        assert isinstance(screen, HistoryScreen)
        listed = screen.query_one(OptionList)
        assert listed.option_count == 3 and listed.highlighted == 2  # the newest: /clear
        await pilot.press("up", "up")  # the /forget
        await pilot.press("enter")
        await idle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await idle(pilot)
        root = app.focused_agent
        assert not isinstance(app.screen, (HistoryScreen, ConfirmScreen))
        undos = [e.payload["target"] for e in await events_of(app, root, "undo")]
        assert len(undos) == 3
        replayer = await app.session.replayer(root)
        assert users["alpha"] in replayer.ctx and replayer.pins == []
        commands = [e.payload["text"] for e in await events_of(app, root, "command")]
        assert commands[-1].startswith("/undo --to ")


async def test_keep_and_escape_write_nothing_and_undone_ones_cannot_be_chosen(bench):
    async with bench.prep() as session:
        await _changes(session)
        await session.command(root_id(session), "/undo")  # the /clear is undone
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await _open(pilot)
        screen = app.screen
        assert isinstance(screen, HistoryScreen)
        listed = screen.query_one(OptionList)
        assert listed.get_option_at_index(2).disabled and listed.highlighted == 1
        root = app.focused_agent
        before = len(await events_of(app, root, "undo"))
        await pilot.press("enter")
        await idle(pilot)
        await pilot.press("n")  # Keep
        await idle(pilot)
        assert isinstance(app.screen, HistoryScreen)
        await pilot.press("escape")
        await idle(pilot)
        assert not isinstance(app.screen, HistoryScreen)
        assert len(await events_of(app, root, "undo")) == before
