"""The window's rule says the turns above it are summarised, and /context shows the
summary (summaries of pruned turns, issue 15 item 3), on the offline model."""

from __future__ import annotations

from ikigai_tui.core.compaction import CompactionSettings

from .conftest import SIZE, all_lines, conversation, idle, settle, type_text


def summarising(session) -> None:
    session.settings = session.settings._replace(
        compaction=CompactionSettings(summarize_pruned=True))


async def test_the_rule_says_the_turns_above_are_summarised(bench):
    async with bench.prep(budget=2_000) as session:
        summarising(session)
        await conversation(session, *[f"Question {n}: " + "words " * 150 for n in range(6)])
    app = bench.app(budget=2_000)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        summarising(app.session)
        await app.panes.refresh_titles_and_rules()
        await idle(pilot)
        window = await app.session.measure(app.focused_agent)
        assert window.pruned_summary > 0 and window.pruned_covered > 0
        scrollback = app.panes.active.scrollback
        rule = [line for line in all_lines(scrollback) if "window starts here" in line]
        assert len(rule) == 1, rule
        assert (f"{window.pruned_covered} earlier messages summarised ({window.pruned_summary} "
                "tokens, in /context)") in rule[0], rule[0]
        await type_text(pilot, "/context")
        await pilot.press("enter")
        await idle(pilot)
        lines = all_lines(scrollback)
        assert any(line.strip().startswith("pruned summary") and "summarised, extractive" in line
                   for line in lines), lines
        assert any("| Extractive summary" in line for line in lines)
