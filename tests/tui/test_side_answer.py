"""/btw on the full screen (issue 27 item 5): its panel opens over the pane and shows the
side answer as it streams; c copies it, Esc closes it; the scrollback keeps the record,
the context does not change; Esc while it streams stops it and writes nothing. And the
panel's snapshot."""

from __future__ import annotations

from ikigai_tui.tui.screens.side_answer import SideAnswerScreen

from .conftest import (
    SIZE, all_lines, events_of, idle, root_id, say, send_text, settle, talked_app, type_text,
)

QUESTION = "what did I ask first"


async def test_btw_panel_streams_copies_and_closes(bench):
    app = await talked_app(bench)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        root = app.focused_agent
        before = await app.session.messages(root)
        await send_text(pilot, f"/btw {QUESTION}")
        screen = app.screen
        assert isinstance(screen, SideAnswerScreen)
        assert screen.done
        assert screen.text.startswith(f'Offline model here. You said: "{QUESTION}". I can see 3')
        await pilot.press("c")
        assert app.clipboard == screen.answer == screen.text
        await pilot.press("escape")
        await idle(pilot)
        assert not isinstance(app.screen, SideAnswerScreen)
        assert app.prompt_input.text == ""
        (event,) = await events_of(app, root, "btw")
        assert event.payload["question"] == QUESTION
        assert await app.session.messages(root) == before  # the context is as it was
        text = " ".join(all_lines(app.panes.active.scrollback))
        assert f"/btw {QUESTION}" in text and "Side answer (not in any context):" in text


async def test_btw_esc_while_it_streams_writes_nothing(bench):
    app = await talked_app(bench, delay=0.2)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        root = app.focused_agent
        count = len(await events_of(app, root))
        await type_text(pilot, f"/btw {QUESTION}")
        await pilot.press("enter")
        await pilot.pause(0.5)
        screen = app.screen
        assert isinstance(screen, SideAnswerScreen) and not screen.done
        assert screen.answer  # some of it arrived
        await pilot.press("escape")
        await idle(pilot)
        assert not isinstance(app.screen, SideAnswerScreen)
        assert len(await events_of(app, root)) == count
        assert "nothing was written" in " ".join(all_lines(app.panes.active.scrollback))


def test_btw_panel_snapshot(bench, snap_compare):
    async def steps(session):
        await say(session, root_id(session), "Plan the release: tests, docs, then the tag.")

    bench.prepare(steps)
    app = bench.app()

    async def run_before(pilot):
        await settle(pilot)
        await send_text(pilot, "/btw what comes after the docs?")
        assert isinstance(app.screen, SideAnswerScreen) and app.screen.done

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
