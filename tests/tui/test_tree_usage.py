"""The agent tree shows what each agent spent so far (issue 13, item 21): its tokens in
and out to date and their cost, from its usage events; no cost where a model it used has
no price; nothing before its first request."""

from __future__ import annotations

import re

import pytest

from ikigai_tui.core.tokens.limits import format_percent, format_tokens
from ikigai_tui.core.usage.ledger import UsageTotals
from ikigai_tui.tui.widgets.agent_tree import AgentRow, agent_label, spent_text

from .conftest import SIZE, conversation, idle, root_id, settle, type_text


def test_spent_reads_tokens_then_cost_and_only_a_known_cost():
    assert spent_text(None) == ""
    assert spent_text(UsageTotals()) == ""
    assert spent_text(UsageTotals(12_000, 345, 0.0432)) == "spent 12K $0.04"
    assert spent_text(UsageTotals(900, 50, 0.0)) == "spent 950"  # free: no cost to show
    assert spent_text(UsageTotals(5_000, 100, 0.01, ("openai/fake-model",))) == "spent 5.1K"


def test_the_spending_comes_before_the_window_the_gauge_shows_too():
    row = AgentRow("k", "kid", "idle", 1, 40.0, None, 80_000, 100_000, "spent 12K $0.04")
    assert agent_label(row, False).plain == "○ kid 40% ✉1 · spent 12K $0.04 · 80K/100K"
    unmeasured = AgentRow("k", "kid", "idle", 0, None, None, spent="spent 12K $0.04")
    assert agent_label(unmeasured, False).plain == "○ kid · spent 12K $0.04"


async def test_the_tree_shows_each_agents_spending_as_it_grows(bench):
    async with bench.prep() as session:
        await conversation(session, "hello there", "and again")
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        root = app.focused_agent
        first = app.session.usages.now(root)
        assert first is not None and first.input_tokens > 0 and first.output_tokens > 0
        label = app.agent_tree.node_for(root).label.plain
        total = format_tokens(first.input_tokens + first.output_tokens)
        assert f" · spent {total} · " in label, label  # the offline model is free: no cost

        await type_text(pilot, "one more question")
        await pilot.press("enter")
        await idle(pilot)
        after = app.session.usages.now(root)
        assert after is not None and after.input_tokens > first.input_tokens
        label = app.agent_tree.node_for(root).label.plain
        assert f" · spent {format_tokens(after.input_tokens + after.output_tokens)} · " in label, label


@pytest.mark.parametrize("size", [SIZE, (80, 24)], ids=["120x40", "80x24"])
async def test_each_rows_usage_is_whole_at_the_default_widths(bench, size):
    """Issue 25 review: at the default tree width the row read `▶ ○ root (a1b2c1) 1% …`,
    the usage cut after its share while the name kept its id. The name gives way first
    (its id, what it spent, its end), so the share and the window's fill show whole."""
    async with bench.prep() as session:
        await conversation(session, "hello there")
        await session.command(root_id(session), "/fork --name researcher-of-the-bugfix")
        await session.wait_idle()
    app = bench.app()
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        tree = app.agent_tree
        rows = [tree.render_line(y).text.rstrip() for y in range(len(app.session.tree))]
        for agent, row in zip(app.session.tree, rows):
            window = await app.session.measure(agent.id)
            fill = format_tokens(window.tokens)
            usage = re.escape(f"{format_percent(window.percent)} · {fill}")
            assert re.search(rf" {usage}(/{format_tokens(window.budget)})?( …)?$", row), (size, row)
        assert rows[0].lstrip().startswith("▶ ○ root "), rows  # the name itself, whole
        assert "resea" in rows[1], rows  # the child's name: its end given way


def test_the_name_gives_way_before_the_usage():
    """What goes first as the tree narrows: the id, the spending (marked `…`), the name's
    end (to MIN_NAME cells), the window's budget; only then whole fields, from the end."""
    row = AgentRow("7a1b2c3d", "researcher (7a1b2c)", "idle", 0, 1.0, None, 1_400, 100_000,
                   "spent 2.5K")
    assert [agent_label(row, False, width=w).plain for w in (50, 40, 30, 26, 20, 17, 10)] == [
        "○ researcher (7a1b2c) 1% · spent 2.5K · 1.4K/100K",
        "○ researcher 1% · spent 2.5K · 1.4K/100K",
        "○ researcher 1% · 1.4K/100K …",
        "○ resear… 1% · 1.4K/100K …",
        "○ resea… 1% · 1.4K …",
        "○ researcher 1% …",  # too narrow for MIN_NAME and the fill: fields go, the name stays
        "○ researc…",
    ]
