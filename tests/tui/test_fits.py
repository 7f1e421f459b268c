"""Lines shortened rather than cut (issue 23, item 11): the line standing for a hidden run
of messages and a pane's title drop whole words or parts at a narrow width; never a word
cut mid-way, never a title ending in a dangling " · "."""

from __future__ import annotations

import re
import time

import pytest
from rich.cells import cell_len

from ikigai_tui.tui import render
from ikigai_tui.tui.fit import fit

from .conftest import all_lines, conversation, idle, root_id, settle, type_text


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


async def _command_lines(bench, size, command: str) -> list[str]:
    """The lines a command's entry draws in the scrollback at `size`, the command first."""
    app = bench.app()
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await type_text(pilot, command)
        await pilot.press("enter")
        await idle(pilot)
        lines = [line.rstrip() for line in all_lines(app.panes.active.scrollback)]
    start = max(i for i, line in enumerate(lines) if line.startswith(command))
    end = lines.index("", start)
    return lines[start:end]


@pytest.mark.parametrize("size", [(60, 40), (48, 40)])
async def test_wrapped_command_output_keeps_its_indent(bench, size):
    async with bench.prep() as session:
        await conversation(session, "a first question to have something in the context")
    lines = await _command_lines(bench, size, "/context")
    assert len(lines) > 9  # narrow: some lines wrapped
    for line in lines[1:]:
        assert line.startswith("  "), lines  # under the command, never at column 0


@pytest.mark.parametrize("size", [(120, 40), (60, 40), (48, 40)])
async def test_context_stays_a_table_in_a_narrow_pane(bench, size):
    async with bench.prep() as session:
        await conversation(session, "a first question to have something in the context")
    lines = await _command_lines(bench, size, "/context")
    rows = {label: next(line for line in lines if line.lstrip().startswith(label))
            for label in ("system prompt", "tools", "summaries", "window", "outside window")}
    # Each label starts in one column, and each figure ends in one (right-aligned).
    starts = {len(line) - len(line.lstrip()) for line in rows.values()}
    assert len(starts) == 1, rows
    figures = {label: re.match(r" +[\d,]+", line[line.index(label) + len(label):])
               for label, line in rows.items()}
    assert all(figures.values()), rows
    assert len({line.index(label) + len(label) + figures[label].end()
                for label, line in rows.items()}) == 1, rows
    # A note that wraps goes on in its own column, under its start; a pane too narrow for
    # a note column puts each note on the lines under its row, indented under the label.
    outside = lines.index(rows["outside window"])
    row = rows["outside window"]
    if "(" in row:
        note_column = row.index("(")
        following = lines[outside + 1:]
    else:
        assert size[0] < 120, lines  # a wide pane keeps the notes beside the figures
        note_column = row.index("outside window") + 2
        assert lines[outside + 1][note_column] == "(", lines  # the note, right under its row
        following = lines[outside + 2:]
    for line in following:
        if not line.startswith(" " * note_column):
            break
        assert line[note_column] != " ", lines  # the note's next line, in its column
    assert all(cell_len(line) <= size[0] for line in lines)


async def test_a_time_relative_to_now_is_computed_when_shown(bench, monkeypatch):
    async with bench.prep() as session:
        await conversation(session, "first question")
        await session.command(root_id(session), "/clear")
        await session.command(root_id(session), "/undo")
        events = await session.store.events(root_id(session))
    logged = [e.payload["output"][0] for e in events if e.kind == "command"
              and e.payload.get("text") == "/undo"][0]
    assert "ago" not in logged and "just now" not in logged  # the log keeps the time only
    made = [e.created_at for e in events if e.kind == "clear"][0]
    for later, said in ((5, "just now"), (5 * 60 + 5, "5 minutes ago"), (2 * 3600 + 5, "2 hours ago")):
        monkeypatch.setattr(render, "clock", lambda later=later: made + later)
        app = bench.app()
        async with app.run_test(size=(120, 30)) as pilot:
            await settle(pilot)
            text = " ".join(all_lines(app.panes.active.scrollback))
        clock = time.strftime("%H:%M", time.localtime(made))
        if time.localtime(made)[:3] != time.localtime(made + later)[:3]:
            clock = time.strftime("%Y-%m-%d %H:%M", time.localtime(made))
        assert f"Undid /clear (made at {clock}, {said})" in text, text


async def test_a_send_by_the_model_shows_once(bench):
    async with bench.prep() as session:
        await session.command(root_id(session), "/fork --name kid")
    for reopened in (False, True):
        app = bench.app()
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            if not reopened:  # the offline model calls its slash tool: /send kid hello kid
                await type_text(pilot, "@slash send kid hello kid")
                await pilot.press("enter")
                await idle(pilot)
            lines = [line.strip() for line in all_lines(app.panes.active.scrollback)]
        said = [line for line in lines if "hello kid" in line and not line.startswith("›")]
        assert said == ["▸ slash /send kid hello kid"], lines
        sent = [line for line in lines if "Mail sent to kid" in line
                and not line.startswith("Tool results")]  # (the offline model's reply)
        assert len(sent) == 1 and sent[0].startswith("◂ Mail sent to kid"), lines


@pytest.mark.parametrize("width", [120, 80, 66])
async def test_the_window_rule_drops_whole_parts_of_its_words(bench, width):
    async with bench.prep(budget=800) as session:
        await conversation(session, "first question", "second question", "third question",
                           "fourth question", "fifth question")
    app = bench.app(budget=800)
    async with app.run_test(size=(width, 30)) as pilot:
        await settle(pilot)
        rules = [line.strip() for line in all_lines(app.panes.active.scrollback)
                 if "window starts here" in line]
    assert rules, "no window rule"
    words = rules[0].strip("─ ")
    assert re.fullmatch(r"window starts here( · \d+ older turns? not sent)?", words), rules
    if width >= 100:
        assert "older turn" in words
