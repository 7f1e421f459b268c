"""The cursor mode (F7, issue 27 item 4): select any entry of the focused scrollback,
move across it (and across pages), and act on it through the command path: fork from
it, mark at it, forget its exchange (through the preview), pin it, copy it, view it,
restore it when it is out of the context; Esc leaves."""

from __future__ import annotations

from contextlib import asynccontextmanager

from ikigai_tui.tui.screens.cursor_menu import CursorMenu
from ikigai_tui.tui.screens.message_view import MessageScreen
from ikigai_tui.tui.screens.preview import PreviewScreen

from .conftest import SIZE, idle, root_id, say, settle


async def _started(bench, talks: int = 3):
    async with bench.prep() as session:
        root = root_id(session)
        for n in range(talks):
            await say(session, root, f"question {n}")
    return root


async def calm(pilot) -> None:
    """Settled, the focus left where the keys put it (`settle` focuses the input)."""
    await pilot.app.session.wait_idle()
    await idle(pilot)


async def _enter(pilot, app):
    await pilot.press("f7")
    await calm(pilot)
    scrollback = app.panes.active.scrollback
    assert scrollback.cursor is not None
    return scrollback


async def test_f7_selects_the_last_entry_arrows_move_and_esc_leaves(bench):
    root = await _started(bench)
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        scrollback = await _enter(pilot, app)
        keys = [m[0] for m in await app.session.messages(root)]
        assert scrollback.cursor == keys[-1]
        assert scrollback.bar_text().startswith(f" #{keys[-1]} assistant · in context")
        await pilot.press("up", "up")
        await calm(pilot)
        assert scrollback.cursor == keys[-3]
        await pilot.press("down")
        assert scrollback.cursor == keys[-2]
        await pilot.press("home")
        await calm(pilot)
        assert scrollback.cursor == keys[0]
        await pilot.press("end")
        await calm(pilot)
        assert scrollback.cursor == keys[-1]
        await pilot.press("escape")
        await calm(pilot)
        assert scrollback.cursor is None
        assert app.focused is app.prompt_input


@asynccontextmanager
async def _in_mode(bench, talks: int = 3):
    """The app on `talks` exchanges, in the cursor mode: (pilot, root, the context's ids)."""
    root = await _started(bench, talks)
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        keys = [m[0] for m in await app.session.messages(root)]
        await _enter(pilot, app)
        yield pilot, root, keys


async def test_fork_mark_and_pin_keys_write_what_the_typed_commands_write(bench):
    async with _in_mode(bench) as (pilot, root, keys):
        app = pilot.app
        await pilot.press("up", "up", "f")
        await calm(pilot)
        child = next(a for a in app.session.tree if a.id != root)
        assert [m[0] for m in await app.session.messages(child.id)] == keys[:4]
        await pilot.press("m")
        await calm(pilot)
        marks = (await app.session.replayer(root)).valid_marks()
        assert [m.name for m in marks] == [f"at-{keys[3]}"]
        await pilot.press("p")
        await calm(pilot)
        reply = (await app.session.messages(root))[3][2]["content"]
        assert (await app.session.replayer(root)).pins == [" ".join(reply.split())]
        events = [e.payload.get("text") for e in await app.session.store.events(root)
                  if e.kind == "command"]
        assert f"/fork --at {keys[3]}" in events and f"/mark at-{keys[3]} --at {keys[3]}" in events


async def test_forget_previews_exactly_the_exchange(bench):
    async with _in_mode(bench) as (pilot, _root, keys):
        app = pilot.app
        await pilot.press("up", "d")  # the user message of the last exchange
        await calm(pilot)
        assert isinstance(app.screen, PreviewScreen)
        assert [i.id for i in app.screen._items] == keys[-2:]


async def test_copy_view_and_the_menu(bench):
    root = await _started(bench, talks=1)
    app = bench.app()
    copied = []
    async with app.run_test(size=SIZE) as pilot:
        app.copy_to_clipboard = copied.append
        await settle(pilot)
        messages = await app.session.messages(root)
        await _enter(pilot, app)
        await pilot.press("c")
        await calm(pilot)
        assert copied == [messages[-1][2]["content"]]
        await pilot.press("v")
        await calm(pilot)
        assert isinstance(app.screen, MessageScreen)
        await pilot.press("escape")
        await calm(pilot)
        await pilot.press("enter")
        await calm(pilot)
        assert isinstance(app.screen, CursorMenu)
        assert "restore" not in app.screen.allowed and "fork" in app.screen.allowed
        await pilot.press("f")
        await calm(pilot)
        assert len(app.session.tree) == 2


async def test_restore_brings_back_an_entry_out_of_the_context(bench):
    root = await _started(bench, talks=2)
    async with bench.prep() as session:
        keys = [m[0] for m in await session.messages(root)]
        await session.command(root, f"/forget --ids {keys[0]}-{keys[1]}")
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        scrollback = await _enter(pilot, app)
        await pilot.press("home")
        await calm(pilot)
        assert scrollback.cursor == keys[0]
        assert "out of context" in scrollback.bar_text() and "r restore" in scrollback.bar_text()
        await pilot.press("f")  # does not apply out of the context: nothing forked
        await calm(pilot)
        assert len(app.session.tree) == 1
        await pilot.press("r")
        await calm(pilot)
        assert [m[0] for m in await app.session.messages(root)] == [keys[0], *keys[2:]]


async def test_moving_up_past_the_first_entry_loaded_reads_the_older_page(bench):
    root = await _started(bench, talks=30)  # 60 entries: more than a page
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        keys = [m[0] for m in await app.session.messages(root)]
        scrollback = await _enter(pilot, app)
        first_loaded = scrollback.items[0].key
        assert first_loaded > keys[0]  # the oldest page is not loaded yet
        seen = []
        for _ in range(8):
            await pilot.press("pageup")
            await calm(pilot)
            seen.append(scrollback.cursor)
        assert seen == sorted(seen, reverse=True) and scrollback.cursor == keys[0]
        await pilot.press("up")  # at the very first entry: stays
        await calm(pilot)
        assert scrollback.cursor == keys[0]
        await pilot.press("down")
        await calm(pilot)
        assert scrollback.cursor == keys[1]
