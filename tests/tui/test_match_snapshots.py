"""Snapshots of the matching screens over the app (SVGs in <root>/snapshots/test_match_snapshots/):
the progress modal while a matcher runs, the preview of its matches (grouped by exchange,
with reasons), at 120x40 and 80x24, and one message in full.

The screens are pushed the way tui/submit.py pushes them, on a real conversation: the
items are that conversation's messages, the reasons written here. Nothing depends on the
clock (the progress modal gets a fixed one). Update with `--snapshot-update` and look at
every changed SVG before committing it.
"""

from __future__ import annotations

from ikigai_tui.core.events import message_text
from ikigai_tui.tui.screens.matching import MatchingScreen
from ikigai_tui.tui.screens.message_view import MessageScreen
from ikigai_tui.tui.screens.preview import PreviewItem, PreviewScreen

from .conftest import SIZE, idle, root_id, say, settle

QUESTIONS = [
    "Can you sketch the database schema for the orders service?",
    "What's a good name for the new dashboard?",
    "Should the schema use UUIDs or integer keys for orders?",
    "Write a haiku about Lisbon in November.",
    "Add a shipped_at column to the orders table: what migration do we need?",
]
REASONS = {  # by question: why the matcher picked its exchange's messages
    0: ("asks for the database schema", "answers with the schema of the orders service"),
    2: ("a question about the schema's keys", "discusses keys of the schema"),
    4: ("changes the orders table", "the migration of the schema"),
}
NARROW = (80, 24)


async def _conversation(session) -> None:
    for text in QUESTIONS:
        await say(session, root_id(session), text)


async def _matches(app) -> list[PreviewItem]:
    """The messages of the exchanges that match "database schema", with reasons."""
    exchanges: list[list[tuple[int, str, str]]] = []
    for key, kind, payload in await app.session.messages(app.focused_agent):  # with the text
        if kind == "user" or not exchanges:
            exchanges.append([])
        exchanges[-1].append((key, kind, message_text(kind, payload)))
    assert len(exchanges) == len(QUESTIONS)
    items = []
    for number, reasons in REASONS.items():
        messages = exchanges[number]
        for (key, kind, text), reason in zip(messages, reasons, strict=True):
            tokens = max(1, len(text) // 4)
            items.append(PreviewItem(key, kind, text, tokens, reason=reason,
                                     exchange=messages[0][0], checked=number != 2 or kind == "user"))
    return items


async def _load_text(app, message_id: int) -> str:
    r = await app.session.replayer(app.focused_agent)
    _seq, kind, payload = (await app.session.bodies.entries(r, [message_id]))[message_id]
    return message_text(kind, payload)


async def _push_preview(app, pilot, mode: str = "remove", unlisted=(0, 0)) -> PreviewScreen:
    items = await _matches(app)
    tokens = (await app.session.measure(app.focused_agent)).tokens
    title = "Forget: review the messages" if mode == "remove" else "Remember only: review the messages"
    screen = PreviewScreen(title, items, tokens, mode=mode,
                           matcher="local (words + meaning)", criteria="database schema",
                           note="A tool call and its result always go together.",
                           load_text=lambda i: _load_text(app, i), unlisted=unlisted)
    app.push_screen(screen)
    await idle(pilot)
    assert app.screen is screen
    return screen


def test_matching_progress(bench, snap_compare):
    """The matcher at work: 3 of 8 chunks reviewed, 12 s in."""
    bench.prepare(_conversation)
    app = bench.app()

    async def run_before(pilot):
        await settle(pilot)
        now = [500.0]
        screen = MatchingScreen('Forget: finding "database schema"', "openai/gpt-4o-mini (LLM)",
                                clock=lambda: now[0])
        app.push_screen(screen)
        await idle(pilot)
        screen.progress(0, 8)
        now[0] += 12.4
        screen.progress(3, 8)
        await idle(pilot)
        assert app.screen is screen and screen.done == 3

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_match_preview(bench, snap_compare):
    """/forget database schema: three exchanges matched, each message with its reason; the
    second exchange's reply unticked, the cursor on the first reply."""
    bench.prepare(_conversation)
    app = bench.app()

    async def run_before(pilot):
        await settle(pilot)
        screen = await _push_preview(app, pilot)
        await pilot.press("down")
        await idle(pilot)
        lst = screen.preview_list
        assert lst.grouped and lst.group_count == 3 and lst.current.id == 2
        assert screen.checked_ids == [1, 2, 7, 13, 14]

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_match_preview_remember_narrow(bench, snap_compare):
    """/remember database schema at 80x24: the reasons on their own lines still read, and
    the totals say what leaves (the four messages not listed included)."""
    bench.prepare(_conversation)
    app = bench.app()

    async def run_before(pilot):
        await settle(pilot)
        screen = await _push_preview(app, pilot, mode="keep", unlisted=(4, 60))
        assert screen.leaving()[0] == 5

    assert snap_compare(app, terminal_size=NARROW, run_before=run_before)


def test_match_preview_message_view(bench, snap_compare):
    """`v` on the first reply: the whole message over the preview."""
    bench.prepare(_conversation)
    app = bench.app()

    async def run_before(pilot):
        await settle(pilot)
        await _push_preview(app, pilot)
        await pilot.press("down", "v")
        await idle(pilot)
        assert isinstance(app.screen, MessageScreen) and app.screen.loaded

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
