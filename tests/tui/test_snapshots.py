"""Snapshots of the whole app at 120x40 on prepared databases (SVGs in <root>/snapshots/test_snapshots/).

Update with `pytest tests/tui/test_snapshots.py --snapshot-update`, then look at every
changed SVG before committing it: a snapshot that looks wrong is a bug, not a baseline.
Each `run_before` also asserts the state the picture is meant to show, so a snapshot
cannot silently capture the wrong screen.
"""

from __future__ import annotations

import math

import pytest

from ikigai_tui.core.mailbox import MailSettings
from ikigai_tui.core.tokens.window import CONTEXT_FULL
from ikigai_tui.tui.screens.help import HelpScreen
from ikigai_tui.tui.screens.preview import PreviewScreen

from .conftest import (SIZE, agent_named, all_lines, idle, root_id, say, send_text, set_limit,
                       settle, type_text)

QUESTIONS = [
    "Hello there, what's the plan for today?",
    "Tell me about marks.",
    "And about forks?",
    "How does the sliding window work?",
    "One more question before we stop.",
]


async def _conversation(session, turns: int = len(QUESTIONS)) -> None:
    root = root_id(session)
    for text in QUESTIONS[:turns]:
        await say(session, root, text)


def test_first_start_offline(bench, snap_compare):
    """An empty database on the offline model: the root agent, the welcome in its empty
    scrollback, the status line says the model is offline, the gauge, the input and the
    footer."""
    app = bench.app()

    async def run_before(pilot):
        await settle(pilot)
        assert app.session is not None and len(list(app.session.tree)) == 1
        assert all_lines(app.panes.active.scrollback)[0] == "Welcome to ikigai."
        assert app.session.model_of(app.session.tree.root) == "offline"

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_conversation_with_window_rule(bench, snap_compare):
    """Five turns over a 400-token budget: the oldest turns are out of the window, the
    yellow rule marks where it starts and the gauge counts the pruned turns."""
    bench.prepare(_conversation, budget=400)
    app = bench.app(budget=400)

    async def run_before(pilot):
        await settle(pilot)
        scrollback = app.panes.active.scrollback
        assert scrollback.rule_key is not None
        assert any("window starts here" in line for line in all_lines(scrollback))

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


@pytest.mark.parametrize(("state", "share"), [("normal", 0.50), ("warning", 0.85), ("critical", 0.97)],
                         ids=["normal", "warning", "critical"])
def test_gauge(bench, snap_compare, state, share):
    """The gauge in each style, the model's input limit chosen so the usage is ~50%,
    ~85% and ~97% (window off, budget 0); the tree shows the same percentage."""
    bench.prepare(lambda s: _conversation(s, 3), budget=0)
    app = bench.app(budget=0)

    async def run_before(pilot):
        await settle(pilot)
        tokens = (await app.session.measure(app.focused_agent)).tokens
        set_limit(app, math.ceil(tokens / share))
        await idle(pilot)
        assert app.gauge.state == state
        assert not app.prompt_input.has_class("-blocked")

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


async def _tree(session) -> None:
    root = root_id(session)
    await say(session, root, "Plan: research, then write.")
    await session.command(root, "/fork --name research Find sources on context windows.")
    await session.wait_idle()
    await session.command(root, "/fork --name writer")
    research = agent_named(session, "research")
    await session.command(research, "/fork --name critic Check the sources.")
    await session.wait_idle()
    # Their mail waits, unread: as with mail = "manual" in the config.
    session.settings = session.settings._replace(mail=MailSettings("manual"))
    await session.command(root, "/send research Please also look at forks.")
    await session.command(root, "/send research And at marks.")
    await session.command(root, "/send writer Draft the introduction.")


def test_agent_tree_with_unread_mail(bench, snap_compare):
    """Root with two children and a grandchild; research has two unread mails, writer one."""
    bench.prepare(_tree)
    app = bench.app()

    async def run_before(pilot):
        await settle(pilot)
        tree = app.session.tree
        assert len(list(tree)) == 4
        assert tree[agent_named(app.session, "research")].unread == 2
        assert tree[agent_named(app.session, "writer")].unread == 1

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_split_view(bench, snap_compare):
    """F2 adds a pane for the root's first child beside the root's own pane."""
    bench.prepare(_tree)
    app = bench.app()

    async def run_before(pilot):
        await settle(pilot)
        await pilot.press("f2")
        await idle(pilot)
        shown = [pane.agent_id for pane in app.panes.all()]
        assert shown == [root_id(app.session), agent_named(app.session, "research")]

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_forget_preview(bench, snap_compare):
    """`/forget --ids 4,5 --preview` typed and sent opens the preview with both messages ticked."""
    bench.prepare(lambda s: _conversation(s, 3))
    app = bench.app()

    async def run_before(pilot):
        await settle(pilot)
        await send_text(pilot, "/forget --ids 4,5 --preview")
        assert isinstance(app.screen, PreviewScreen)
        assert app.screen.checked_ids == [4, 5]

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_help_screen(bench, snap_compare):
    """F1: the help dialog over the app."""
    app = bench.app()

    async def run_before(pilot):
        await settle(pilot)
        await pilot.press("f1")
        await idle(pilot)
        assert isinstance(app.screen, HelpScreen)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_error_line(bench, snap_compare):
    """`/clear NOPE` with no marks: a red error line naming the mark; nothing written."""
    bench.prepare(lambda s: _conversation(s, 1))
    app = bench.app()

    async def run_before(pilot):
        await settle(pilot)
        await type_text(pilot, "/clear NOPE")
        await pilot.press("enter")
        await idle(pilot)
        lines = all_lines(app.panes.active.scrollback)
        assert any(line.startswith("Error:") and "NOPE" in line for line in lines)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_context_full(bench, snap_compare):
    """The limit below the current tokens (budget 0): the input's title says the context
    is full, and a message sent anyway is refused with the same words."""
    bench.prepare(lambda s: _conversation(s, 2), budget=0)
    app = bench.app(budget=0)

    async def run_before(pilot):
        await settle(pilot)
        tokens = (await app.session.measure(app.focused_agent)).tokens
        set_limit(app, tokens - 1)
        await idle(pilot)
        assert app.gauge.state == "full"
        assert app.prompt_input.blocked == CONTEXT_FULL
        await type_text(pilot, "Are you still there?")
        await pilot.press("enter")
        await idle(pilot)
        lines = all_lines(app.panes.active.scrollback)
        assert any(CONTEXT_FULL in line and line.startswith("Error:") for line in lines)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_agent_tree_with_a_new_badge(bench, snap_compare):
    """A child forked with a prompt answers unseen: the tree badges it `new` (issue 23, item 4)."""
    bench.prepare(_tree)
    app = bench.app()

    async def run_before(pilot):
        await settle(pilot)
        await send_text(pilot, "/fork --name helper look into plums")
        helper = agent_named(app.session, "helper")
        assert helper in app.unseen and helper not in [p.agent_id for p in app.panes.all()]

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_narrow_tree_ends_rows_with_an_ellipsis(bench, snap_compare):
    """At 80x24 the tree's rows drop whole fields and end with `…`, no scrollbar beneath
    (issue 23, item 5)."""
    bench.prepare(_tree)
    app = bench.app()

    async def run_before(pilot):
        await settle(pilot)
        tree = app.agent_tree
        assert tree.virtual_size.width <= tree.scrollable_content_region.width

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)
