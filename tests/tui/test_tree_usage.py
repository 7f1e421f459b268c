"""The agent tree shows what each agent spent so far (issue 13, item 21): its tokens in
and out to date and their cost, from its usage events; no cost where a model it used has
no price; nothing before its first request."""

from __future__ import annotations

from ikigai_tui.core.tokens.limits import format_tokens
from ikigai_tui.core.usage.ledger import UsageTotals
from ikigai_tui.tui.widgets.agent_tree import AgentRow, agent_label, spent_text

from .conftest import SIZE, conversation, idle, settle, type_text


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
