"""The figures a preview shows are those measured once it is applied (issue 23, review
item 5): the context's size after a /forget or a /recall equals what `/context` (the
measure) says afterwards, /undo repeats that figure, and /context's rows add up to its
total. Each message's count is a fraction of a token (estimated counts are bytes/4):
the preview once scaled each message and added the rounded-up results, which came to
a token a message more than the measure, which adds first and scales once."""

from __future__ import annotations

import re

from ikigai_tui.tui.screens.preview import PreviewScreen

from .conftest import SIZE, conversation, events_of, idle, root_id, settle, type_text

AFTER = re.compile(r"context: ([\d,]+) → ([\d,]+) tokens")
# Lengths chosen so that no message's count is a whole number of tokens.
TALK = ("cooking pasta with lots of garlic", "okapi facts, please", "cooking rice again now",
        "the weather today is fine, isn't it", "more cooking tips", "anything else")


def shown_figures(screen: PreviewScreen) -> tuple[int, int]:
    found = AFTER.search(screen._totals_text().plain)
    assert found, screen._totals_text().plain
    return int(found[1].replace(",", "")), int(found[2].replace(",", ""))


async def _ask(app, pilot, command: str) -> PreviewScreen:
    await settle(pilot)
    await type_text(pilot, command)
    await pilot.press("enter")
    await idle(pilot)
    assert isinstance(app.screen, PreviewScreen)
    return app.screen


async def test_forget_preview_says_the_size_measured_after(bench):
    async with bench.prep() as session:
        await conversation(session, *TALK)
        root = root_id(session)
        cooking = [e.id for e in await session.store.events(root)  # asked and echoed
                   if e.kind in ("user", "assistant") and "cooking" in e.payload["content"]]
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await _ask(app, pilot, f"/forget --ids {','.join(map(str, cooking))} --preview")
        before, after = shown_figures(screen)
        assert before == (await app.session.measure(root)).tokens
        await pilot.press("space")  # one message less: the figure follows
        await idle(pilot)
        _before, after = shown_figures(screen)
        await pilot.press("enter")
        await idle(pilot)
        assert not isinstance(app.screen, PreviewScreen)
        assert (await app.session.measure(root)).tokens == after
        filters = await events_of(app, root, "filter")
        assert filters[-1].payload["after"]["tokens"] == after  # what /undo repeats
        undone = await app.session.command(root, "/undo")
        assert f"(~{after:,})" in " ".join(undone.lines)


async def test_recall_preview_says_the_size_measured_after(bench):
    async with bench.prep() as session:
        await conversation(session, *TALK)
        root = root_id(session)
        await session.command(root, "/forget --ids 1-8")
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await _ask(app, pilot, "/recall cooking")
        before, after = shown_figures(screen)
        assert before == (await app.session.measure(root)).tokens
        assert after > before
        await pilot.press("enter")
        await idle(pilot)
        assert not isinstance(app.screen, PreviewScreen)
        assert (await app.session.measure(root)).tokens == after


async def test_context_rows_add_up_to_the_total(bench):
    """After each message of a conversation (a row of each kind's rounding)."""
    async with bench.prep() as session:
        root = root_id(session)
        for text in TALK:
            await conversation(session, text)
            result = await session.command(root, "/context")
            w = result.data
            assert w.system + w.tools + w.summaries + w.window == w.tokens
            rows = [int(re.search(r"\s([\d,]+)(\s|$)", line)[1].replace(",", ""))
                    for line in result.lines
                    if re.match(r"\s+(system prompt|tools|summaries|window)\s", line)]
            history = re.search(r"history\s+([\d,]+)", " ".join(result.lines))[1]
            assert sum(rows) + w.outside == int(history.replace(",", "")) == w.tokens + w.outside
