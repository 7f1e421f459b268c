"""Lines shortened rather than cut (issue 23, item 11): the line standing for a hidden run
of messages and a pane's title drop whole words or parts at a narrow width; never a word
cut mid-way, never a title ending in a dangling " · "."""

from __future__ import annotations

import pytest
from rich.cells import cell_len

from ikigai_tui.tui.fit import fit

from .conftest import all_lines, conversation, idle, root_id, settle


def test_fit_takes_the_first_wording_that_fits_and_cuts_only_after_a_word():
    wordings = ("one two three four", "one two", "one")
    assert fit(wordings, 80) == "one two three four"
    assert fit(wordings, 10) == "one two"
    assert fit(wordings, 3) == "one"
    assert fit(("alpha beta gamma",), 12) == "alpha beta…"
    assert fit(("(x) · beta gamma",), 8) == "(x)…"  # no dangling separator before "…"
    assert fit(("abcdefghij",), 5) == "abcd…"  # one word wider than the width
    for width in range(1, 20):
        assert cell_len(fit(("⊘ 12 messages cleared · hidden",), width)) <= width


@pytest.mark.parametrize("width", [120, 80, 60, 44])
async def test_the_hidden_runs_line_drops_words_to_fit(bench, width):
    async with bench.prep() as session:
        await conversation(session, "first question", "second question")
        await session.command(root_id(session), "/clear")
    app = bench.app()
    async with app.run_test(size=(width, 24)) as pilot:
        await settle(pilot)
        await pilot.press("f8")
        await idle(pilot)
        sb = app.panes.active.scrollback
        hidden = [line.rstrip() for line in all_lines(sb) if line.startswith("⊘")]
        assert hidden, all_lines(sb)
        line = hidden[0]
        assert line.startswith("⊘ 4 messages cleared")
        assert cell_len(line) <= sb.scrollable_content_region.width
        assert "…" not in line  # shortened by whole words, not cut
        full = "⊘ 4 messages cleared · not in the context, hidden (F8 shows them)"
        assert line in (full, "⊘ 4 messages cleared · hidden (F8 shows them)",
                        "⊘ 4 messages cleared · hidden", "⊘ 4 messages cleared")
        if width >= 100:
            assert line == full


@pytest.mark.parametrize("width", [120, 60, 44, 36])
async def test_a_pane_title_never_ends_in_a_separator(bench, width):
    app = bench.app()
    async with app.run_test(size=(width, 24)) as pilot:
        await settle(pilot)
        title = app.panes.active.title
        text = "".join(segment.text for segment in
                       app.screen._compositor.render_strips()[title.region.y]
                       .crop(title.region.x, title.region.right)).strip()
        full = f"{app.session.tree.label(app.focused_agent)} · idle · offline"
        assert full.startswith(text.rstrip("…"))
        assert not text.endswith(("·", "· ")), text
        assert text in (full, full.rsplit(" · ", 1)[0], full.split(" · ")[0]) or text.endswith("…")
        if width >= 100:
            assert text == full
