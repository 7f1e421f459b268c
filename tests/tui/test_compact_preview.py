"""The /compact preview driven by keys (offline model: an extractive summary, no network):
nothing is written before the answer; Ctrl+S accepts the summary as edited, Escape
refuses it (only the command record), /undo brings the messages back. And a snapshot."""

from __future__ import annotations

import pytest
from textual.widgets import TextArea

from ikigai_tui.core.compaction import CompactionSettings
from ikigai_tui.tui.screens.compact_preview import CompactPreviewScreen
from ikigai_tui.tui.screens.confirm import ConfirmScreen

from .conftest import (
    SIZE, all_lines, conversation, events_of, idle, root_id, say, settle, type_text,
)

QUESTIONS = [
    "Set up the orders service in services/orders/app.py, please.",
    "Use PostgreSQL 16, never SQLite: that is a hard constraint.",
    "The migration failed with `relation orders does not exist`; fix it.",
    "Add an index on orders.created_at.",
    "Now write the README section.",
]


async def _open(bench):
    async with bench.prep() as session:
        await conversation(session, *QUESTIONS)
    return bench.app()


async def _preview(app, pilot) -> tuple[str, list[int], CompactPreviewScreen]:
    await settle(pilot)
    root = app.focused_agent
    before = list((await app.session.replayer(root)).ctx)
    await type_text(pilot, "/compact the database")
    await pilot.press("enter")
    await idle(pilot)
    screen = app.screen
    assert isinstance(screen, CompactPreviewScreen), screen
    return root, before, screen


async def test_compact_preview_accepts_the_edited_summary_and_undo_restores(bench):
    app = await _open(bench)
    async with app.run_test(size=SIZE) as pilot:
        root, before, screen = await _preview(app, pilot)
        assert await events_of(app, root, "compact") == []  # nothing before the answer
        summary = screen.query_one("#compact-summary", TextArea)
        assert summary.has_focus
        assert "Extractive summary" in summary.text and "services/orders/app.py" in summary.text
        totals = str(screen.query_one("#compact-totals").render())
        assert totals.startswith("6 messages (#1-#8, ") and "-> a summary of" in totals
        summary.text = "Orders service on PostgreSQL 16 (never SQLite)."
        await idle(pilot)
        edited = str(screen.query_one("#compact-totals").render())
        assert edited != totals and "saves" in edited  # the saving follows the edit
        await pilot.press("ctrl+s")
        await idle(pilot)
        assert not isinstance(app.screen, CompactPreviewScreen)
        (event,) = await events_of(app, root, "compact")
        assert event.payload["summary"] == "Orders service on PostgreSQL 16 (never SQLite)."
        assert event.payload["edited"] is True
        assert event.payload["ids"] == before[:6]  # all but the latest 2 turns
        ctx = (await app.session.replayer(root)).ctx
        assert list(ctx) == [event.id, *before[6:]]
        assert ctx[event.id][1] == "summary"

        await type_text(pilot, "/undo")
        await pilot.press("enter")
        await idle(pilot)
        assert list((await app.session.replayer(root)).ctx) == before


async def test_compact_preview_refused_writes_only_the_command(bench):
    app = await _open(bench)
    async with app.run_test(size=SIZE) as pilot:
        root, before, _screen = await _preview(app, pilot)
        await pilot.press("escape")
        await idle(pilot)
        assert not isinstance(app.screen, CompactPreviewScreen)
        assert await events_of(app, root, "compact") == []
        assert list((await app.session.replayer(root)).ctx) == before
        commands = await events_of(app, root, "command")
        assert [(c.payload["text"], c.payload["output"]) for c in commands] == [
            ("/compact the database", ["Cancelled."])]


async def test_compact_preview_refuses_an_emptied_summary(bench):
    app = await _open(bench)
    async with app.run_test(size=SIZE) as pilot:
        root, _before, screen = await _preview(app, pilot)
        screen.query_one("#compact-summary", TextArea).text = "   "
        await idle(pilot)
        await pilot.press("ctrl+s")
        await idle(pilot)
        assert app.screen is screen  # still open, saying why
        assert "empty" in str(screen.query_one("#compact-notice").render())
        await pilot.press("escape", "y")  # an edit: discarding it is confirmed
        await idle(pilot)
        assert not isinstance(app.screen, (CompactPreviewScreen, ConfirmScreen))
        assert await events_of(app, root, "compact") == []


async def test_compact_preview_asks_before_discarding_an_edit(bench):
    """Esc after an edit asks first: n (or Esc) goes back to the edit as it was, y
    discards it and cancels, writing only the command record."""
    app = await _open(bench)
    async with app.run_test(size=SIZE) as pilot:
        root, before, screen = await _preview(app, pilot)
        await type_text(pilot, " Keep PostgreSQL.")
        edited = screen.summary
        assert "Keep PostgreSQL." in edited  # typed where the cursor was
        await pilot.press("escape")
        await idle(pilot)
        assert isinstance(app.screen, ConfirmScreen), app.screen
        assert "Discard the edited summary?" in str(app.screen.query_one("#confirm-question").render())
        await pilot.press("n")
        await idle(pilot)
        assert app.screen is screen and screen.summary == edited
        assert screen.query_one("#compact-summary", TextArea).has_focus
        await pilot.press("escape")
        await idle(pilot)
        await pilot.press("escape")  # Esc on the question keeps the edit too
        await idle(pilot)
        assert app.screen is screen and screen.summary == edited
        await pilot.press("escape")
        await idle(pilot)
        await pilot.press("y")
        await idle(pilot)
        assert not isinstance(app.screen, (CompactPreviewScreen, ConfirmScreen))
        assert await events_of(app, root, "compact") == []
        assert list((await app.session.replayer(root)).ctx) == before
        commands = await events_of(app, root, "command")
        assert [c.payload["output"] for c in commands] == [["Cancelled."]]


async def test_compact_with_nothing_to_compact_says_so(bench):
    async with bench.prep() as session:
        await say(session, root_id(session), "Only one turn.")
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await type_text(pilot, "/compact")
        await pilot.press("enter")
        await idle(pilot)
        assert not isinstance(app.screen, CompactPreviewScreen)
        assert await events_of(app, app.focused_agent, "command") == []


def test_compact_preview_snapshot(bench, snap_compare):
    """/compact the database over five turns: the extractive summary in the editor, the
    six messages it replaces, the saving."""
    bench.prepare(lambda session: conversation(session, *QUESTIONS))
    app = bench.app()

    async def run_before(pilot):
        await _preview(app, pilot)
        app.screen.query_one("#compact-summary", TextArea).cursor_blink = False
        await idle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_compact_preview_snapshot_80x24(bench, snap_compare):
    """The same preview at 80x24: the editor gives way, so what it replaces, the sizes
    before and after and the Accept/Cancel buttons are all on screen."""
    bench.prepare(lambda session: conversation(session, *QUESTIONS))
    app = bench.app()

    async def run_before(pilot):
        _root, _before, screen = await _preview(app, pilot)
        screen.query_one("#compact-summary", TextArea).cursor_blink = False
        await idle(pilot)
        for selector in VISIBLE:
            assert screen.region.contains_region(screen.query_one(selector).region), selector

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


async def test_auto_compact_ask_shows_the_preview_after_the_turn_and_the_warning(bench):
    long = " ".join(f"word{i}" for i in range(300))  # ~1,800 characters a message
    async with bench.prep(budget=4_700) as session:
        for n in range(4):
            await say(session, root_id(session), f"Request {n}: {long}")
    app = bench.app(budget=4_700)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        session = app.session
        session.settings = session.settings._replace(compaction=CompactionSettings(auto="ask"))
        root = app.focused_agent
        for n in range(4, 12):
            # Put in the input whole: typed key by key, the 8 messages took ~100 s.
            app.prompt_input.text = f"Request {n} {' '.join(['more'] * 300)}"
            await pilot.press("enter")
            await idle(pilot)
            if isinstance(app.screen, CompactPreviewScreen):
                break
        screen = app.screen
        assert isinstance(screen, CompactPreviewScreen), "the preview did not open"
        assert "(automatic)" in str(screen.query_one(".dialog").border_title)
        assert await events_of(app, root, "compact") == []  # nothing before the answer
        lines = all_lines(app.panes.active.scrollback)
        assert any("/compact or /forget to make room" in line for line in lines)
        await pilot.press("ctrl+s")
        await idle(pilot)
        (event,) = await events_of(app, root, "compact")
        assert event.payload["auto"] is True and event.payload["extractive"] is True


VISIBLE = ("#compact-summary", "#compact-replaced-title", "#compact-replaced",
           "#compact-totals", "#compact-accept", "#compact-cancel")


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_compact_preview_fits_the_screen(bench, size):
    """The editor gives way so what the summary replaces (a row of it at least), the sizes
    before and after and both buttons stay on screen, whole, at 80x24 as at 120x40."""
    app = await _open(bench)
    async with app.run_test(size=size) as pilot:
        _root, _before, screen = await _preview(app, pilot)
        await idle(pilot)
        dialog = screen.query_one(".dialog").content_region
        for selector in VISIBLE:
            region = screen.query_one(selector).region
            assert region.height >= 1 and region.width >= 1, (selector, region)
            assert dialog.contains_region(region), (selector, region, dialog)
        summary = screen.query_one("#compact-summary", TextArea).region
        assert summary.height >= 3, summary  # still room to edit
        replaced = screen.query_one("#compact-replaced")
        assert replaced.region.height >= min(3, len(screen._items)), replaced.region
        assert screen.region.contains_region(screen.query_one(".dialog").region)
