"""Very long entries in the full-screen transcript: a 1 MB single line, or megabytes of
short lines, are folded (the first part drawn, then how much more there is and that
Ctrl+O shows all), so what follows them in the log is still shown, drawing one costs
what a short one does, and Ctrl+O shows them whole without holding a line per row."""

from __future__ import annotations

from ikigai_tui.core.events import WriteBatch
from ikigai_tui.tui.render import FOLD_CHARS, MAX_ITEM_LINES
from ikigai_tui.tui.lines import cost
from ikigai_tui.tui.widgets.scrollback import MAX_LINES, STREAM_LINES

from .conftest import SIZE, idle, root_id, say, screen_lines, settle

MB = 1_000_000


async def _commit(app, *events: tuple[str, dict]) -> None:
    """Events written as the session writes them: the app is told, as for a reply."""
    batch = WriteBatch()
    for kind, payload in events:
        batch.add(app.focused_agent, kind, payload)
    await app.session.commit(batch)


async def _after_the_long_one(app, pilot) -> None:
    await _commit(app, ("user", {"content": "After the long one."}))
    await _commit(app, ("assistant", {"content": "The reply after it."}))
    await app.session.command(app.focused_agent, "/mark after")
    await idle(pilot, timeout=30)


def _assert_later_entries_shown(scrollback) -> None:
    shown = "\n".join(screen_lines(scrollback))
    assert "› After the long one." in shown, shown
    assert "The reply after it." in shown, shown
    assert "Checkpoint 'after' created." in shown, shown


def _assert_bounded(scrollback) -> None:
    held = [cost(strips) for strips in scrollback._strips]
    assert max(held) <= MAX_ITEM_LINES + 2, held
    assert sum(held) <= MAX_LINES


async def _start(bench, pilot_size=SIZE):
    async with bench.prep() as session:
        await say(session, root_id(session), "Before the long one.")
    return bench.app()


async def test_a_one_megabyte_line_then_more_entries_all_shown(bench):
    app = await _start(bench)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        sb = app.panes.active.scrollback
        await _commit(app, ("user", {"content": "send a long line"}))
        await _commit(app, ("assistant", {"content": "x" * MB}))
        await idle(pilot, timeout=30)
        shown = "\n".join(screen_lines(sb))
        assert "x" * 40 in shown
        assert f"… {MB - FOLD_CHARS:,} more characters not shown ({MB:,} in all)" in shown
        assert "Ctrl+O shows all" in shown

        await _after_the_long_one(app, pilot)
        _assert_later_entries_shown(sb)
        _assert_bounded(sb)
        # Scrolling to the top and back (pages read again) keeps them.
        await pilot.press("ctrl+home")
        await idle(pilot)
        await pilot.press("ctrl+end")
        await idle(pilot)
        _assert_later_entries_shown(sb)


async def test_megabytes_of_short_lines_are_folded_too(bench):
    app = await _start(bench)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        sb = app.panes.active.scrollback
        lines = [f"row {n:07d}" for n in range(300_000)]  # 3.3 MB
        await _commit(app, ("user", {"content": "list them"}),
                      ("assistant", {"content": "\n\n".join(lines)}))
        await idle(pilot, timeout=30)
        _assert_bounded(sb)
        await _after_the_long_one(app, pilot)
        _assert_later_entries_shown(sb)
        # What the fold says: the rows drawn, then how much is left.
        held = [strip.text for strip in sb._lines]
        assert any("row 0000000" in line for line in held)
        assert not any("row 0299999" in line for line in held)
        assert any("more characters not shown" in line for line in held)


async def test_ctrl_o_shows_a_folded_entry_whole_and_folds_it_again(bench):
    app = await _start(bench)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        sb = app.panes.active.scrollback
        text = "".join(f"<{n:06d}>" for n in range(125_000))  # 1 MB on one line
        await _commit(app, ("user", {"content": "send a long line"}),
                      ("assistant", {"content": text}))
        await _after_the_long_one(app, pilot)

        await pilot.press("ctrl+o")
        await idle(pilot)
        whole = "".join(strip.text for strip in sb._lines)
        assert text in whole  # every character, in order
        assert "shown whole as plain text · Ctrl+O folds it" in whole
        assert len(sb._lines) > MAX_LINES  # more rows than the drawn bound...
        _assert_bounded(sb)  # ... made only when shown
        _assert_later_entries_shown(sb)

        await pilot.press("ctrl+o")
        await idle(pilot)
        assert text not in "".join(strip.text for strip in sb._lines)
        assert any("Ctrl+O shows all" in strip.text for strip in sb._lines)
        _assert_later_entries_shown(sb)


async def test_a_streaming_reply_draws_a_bounded_number_of_lines(bench):
    app = await _start(bench)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        sb = app.panes.active.scrollback
        piece = "y" * 1000 + " "
        for _ in range(500):  # 500 KB, streamed in 1 KB pieces
            sb.stream(piece)
        assert len(sb._lines.tail) <= STREAM_LINES + 1
        last = sb._lines[len(sb._lines) - 1].text
        assert "more characters arriving" in last
        shown = "\n".join(screen_lines(sb))
        assert "more characters arriving" in shown

        # One huge piece costs no more than many small ones.
        sb.end_stream()
        sb.stream("z" * MB)
        assert len(sb._lines.tail) <= STREAM_LINES + 1
        assert sb._lines[len(sb._lines) - 1].text.startswith("… ")
