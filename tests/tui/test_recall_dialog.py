"""/recall in the TUI (SPEC §8, §12): the hits out of the context open the preview in
mode "restore"; Enter brings the ticked ones back through `/restore IDS` (one `filter`
event of mode restore), Escape writes nothing more than the recall's record; a restored
message's dimmed `⊘` mark in the scrollback goes back to normal."""

from __future__ import annotations

from ikigai_tui.tui.screens.preview import PreviewScreen

from .conftest import SIZE, all_lines, conversation, events_of, idle, root_id, settle, type_text


async def _forgot_zebras(session) -> None:
    root = root_id(session)
    await conversation(session, "zebra crossing", "okapi facts", "zebra stripes", "later on")
    users = {e.payload["content"]: e.id for e in await session.store.events(root)
             if e.kind == "user"}
    await session.command(root, f"/forget --ids {users['zebra crossing']},{users['zebra stripes']}")


async def _open(app, pilot, command: str = "/recall zebra") -> str:
    await settle(pilot)
    await type_text(pilot, command)
    await pilot.press("enter")
    await idle(pilot)
    return app.focused_agent


def _user_ids(events) -> dict[str, int]:
    return {e.payload["content"]: e.id for e in events if e.kind == "user"}


async def test_recall_opens_the_dialog_and_enter_restores_the_ticked(bench):
    async with bench.prep() as session:
        await _forgot_zebras(session)
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        root = await _open(app, pilot)
        screen = app.screen
        assert isinstance(screen, PreviewScreen)
        users = _user_ids(await events_of(app, root))
        offered = [item.id for item in screen.preview_list.items]
        assert users["zebra crossing"] in offered and users["zebra stripes"] in offered
        assert users["okapi facts"] not in offered  # not a hit
        assert await events_of(app, root, "filter") != []  # the forget only
        lines = all_lines(app.panes.active.scrollback)
        assert sum(line.startswith("⊘") for line in lines) == 2  # the two forgotten runs

        # Untick the first (zebra crossing), restore the rest.
        await pilot.press("space")
        await idle(pilot)
        await pilot.press("enter")
        await idle(pilot)
        assert not isinstance(app.screen, PreviewScreen)
        filters = [e.payload for e in await events_of(app, root, "filter")]
        assert [f["mode"] for f in filters] == ["forget", "restore"]
        assert users["zebra stripes"] in filters[-1]["ids"]
        assert users["zebra crossing"] not in filters[-1]["ids"]
        ctx = (await app.session.replayer(root)).ctx
        assert users["zebra stripes"] in ctx and users["zebra crossing"] not in ctx
        commands = [e.payload["text"] for e in await events_of(app, root, "command")]
        assert commands[-2:] == ["/recall zebra", f"/restore {users['zebra stripes']}"]
        lines = all_lines(app.panes.active.scrollback)
        assert sum(line.startswith("⊘") for line in lines) == 1  # only zebra crossing's


async def test_escape_writes_nothing_but_the_recall(bench):
    async with bench.prep() as session:
        await _forgot_zebras(session)
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        root = await _open(app, pilot)
        assert isinstance(app.screen, PreviewScreen)
        count = len(await events_of(app, root))
        await pilot.press("escape")
        await idle(pilot)
        assert not isinstance(app.screen, PreviewScreen)
        assert len(await events_of(app, root)) == count
        assert [e.payload["mode"] for e in await events_of(app, root, "filter")] == ["forget"]


async def test_no_dialog_when_every_hit_is_in_the_context(bench):
    async with bench.prep() as session:
        await conversation(session, "zebra crossing")
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await _open(app, pilot)
        assert not isinstance(app.screen, PreviewScreen)
        assert any("in the context" in line for line in all_lines(app.panes.active.scrollback))


async def test_restore_preview_opens_the_same_dialog(bench):
    async with bench.prep() as session:
        await _forgot_zebras(session)
        root = root_id(session)
        stripes = _user_ids(await session.store.events(root))["zebra stripes"]
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        root = await _open(app, pilot, f"/restore {stripes} --preview")
        assert isinstance(app.screen, PreviewScreen)
        await pilot.press("enter")
        await idle(pilot)
        assert stripes in (await app.session.replayer(root)).ctx


async def _forgot_okapi_exchange(session) -> None:
    root = root_id(session)
    await conversation(session, "zebra one", "okapi two", "zebra three")
    question = _user_ids(await session.store.events(root))["okapi two"]
    await session.command(root, f"/forget --ids {question},{question + 1}")


async def test_a_recalled_reply_comes_with_its_question_as_one_exchange(bench):
    """The dialog offers the question with its reply, under one exchange header, and Enter
    brings back both: the context does not get an answer without its question. (A reply
    found alone brings its question too: tests/integration/test_recall_meaning.py.)"""
    async with bench.prep() as session:
        await _forgot_okapi_exchange(session)
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        root = await _open(app, pilot, "/recall said okapi")
        screen = app.screen
        assert isinstance(screen, PreviewScreen)
        question = _user_ids(await events_of(app, root))["okapi two"]
        items = screen.preview_list
        assert [(item.id, item.role) for item in items.items] == [
            (question, "user"), (question + 1, "assistant")]
        assert items.line_map.headers == [f"exchange #{question} · 2 messages · "
                                          f"{items.total_tokens:,} tokens"]
        assert all((item.reason or "").startswith("forgotten by") for item in items.items)
        await pilot.press("enter")
        await idle(pilot)
        ctx = (await app.session.replayer(root)).ctx
        assert question in ctx and question + 1 in ctx


def test_recall_dialog(bench, snap_compare):
    """The restore dialog: the hits out of the context with their state below each."""
    bench.prepare(_forgot_zebras)
    app = bench.app()

    async def run_before(pilot):
        await _open(app, pilot)
        assert isinstance(app.screen, PreviewScreen)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
