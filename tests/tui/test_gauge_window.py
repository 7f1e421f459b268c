"""The gauge and the tree show the window as well as the model's limit, rounded as
/context rounds them (issue 13, item 3)."""

from __future__ import annotations

from ikigai_tui.core.tokens.limits import format_tokens

from .conftest import SIZE, all_lines, conversation, idle, settle, type_text


async def test_gauge_tree_and_context_show_the_window_and_the_limit_alike(bench):
    async with bench.prep(budget=2_000) as session:
        await conversation(session, *[f"Question {n}: " + "words " * 150 for n in range(6)])
    app = bench.app(budget=2_000)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        window = await app.session.measure(app.focused_agent)
        assert window.pruned_turns > 0 and window.limit == 200_000
        gauge = app.gauge.render().plain
        assert gauge.startswith("Sent: ~") and " of 2K window · " in gauge, gauge
        assert " · 1% of 200K" in gauge  # about 1% of 200K: not "0%" (the defect)

        label = app.agent_tree.node_for(app.focused_agent).label.plain
        spent = app.session.usages.now(app.focused_agent)
        assert spent is not None
        assert label.endswith(f" 1% · spent {format_tokens(spent.input_tokens + spent.output_tokens)}"
                              f" · {format_tokens(window.tokens)}/2K"), label

        await type_text(pilot, "/context")
        await pilot.press("enter")
        await idle(pilot)
        shown = next(line for line in all_lines(app.panes.active.scrollback)
                     if line.startswith("  Sent: "))
        head = shown.strip().split(", ")[0]
        assert gauge.startswith(head), (head, gauge)


def test_tree_label_reads_share_then_mail_then_window():
    """The window's fill comes last, so a narrow tree cuts it, not the unread mail."""
    from ikigai_tui.tui.widgets.agent_tree import AgentRow, agent_label

    row = AgentRow("k", "kid", "idle", 2, 0.975, None, 1_950, 2_000)
    assert agent_label(row, False).plain == "○ kid 1% ✉2 · 1.9K/2K"
    off = AgentRow("k", "kid", "idle", 0, 40.0, None, 80_000, 0)
    assert agent_label(off, False).plain == "○ kid 40% · 80K"
    unknown = AgentRow("k", "kid", "idle", 0, None, None)
    assert agent_label(unknown, False).plain == "○ kid"
