"""/undo in plain words (issue 13, items 4, 5 and 22): it names the command it reverses,
when that was, and what comes back; /pin and /unpin are undone like the other context
changes, the same after a restart; an /undo that reaches past a later /system or /model
says so; no event ids in what people read."""

from __future__ import annotations

import re

import pytest

from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.session import Session, SessionSettings
from ikigai_tui.store.sqlite.store import Store
from ikigai_tui.llm.providers import Providers
from tests.integration.session_helpers import ids, talk

WHEN = r"\(made \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\)"  # the log keeps the time; "just now" is said when shown


async def _turns(session, n: int) -> tuple[str, list[int]]:
    root = session.tree.root.id
    for i in range(n):
        await talk(session, root, f"message {i}")
    return root, await ids(session, root)


async def test_undo_names_the_command_when_and_what_comes_back(session):
    root, before = await _turns(session, 3)
    await session.command(root, f"/forget --ids {before[2]}-{before[3]}")
    out = await session.command(root, "/undo")
    assert len(out.lines) == 1
    assert re.fullmatch(
        rf"Undid /forget --ids {before[2]}-{before[3]} {WHEN}: 2 messages are back in the context "
        r"\(4 -> 6 messages\)\. It had taken the context from 6 messages \(~[\d,]+ tokens\) to 4 "
        r"\(~[\d,]+\)\.", out.lines[0]), out.lines
    assert await ids(session, root) == before


@pytest.mark.parametrize("setup, command, said", [
    (["/mark A"], "/clear", r"Undid /clear {when}: 4 messages are back in the context; mark A is "
                            r"valid again \(0 -> 4 messages\)\."),
    (["/mark A", "x"], "/rewind A", r"Undid /rewind A {when}: 2 messages are back in the context "
                                    r"\(4 -> 6 messages\)\."),
    ([], "/remember --ids 1", r"Undid /remember --ids 1 {when}: 3 messages are back in the context "
                              r"\(1 -> 4 messages\)\..*"),
])
async def test_undo_of_each_kind_in_words(session, setup, command, said):
    root, _ = await _turns(session, 2)
    for line in setup:
        if line.startswith("/"):
            await session.command(root, line)
        else:
            await talk(session, root, line)
    await session.command(root, command)
    out = await session.command(root, "/undo")
    assert re.fullmatch(said.format(when=WHEN), out.lines[0]), out.lines


async def test_pin_and_unpin_are_undone_and_stay_undone_after_a_restart(session, db_path):
    root = session.tree.root.id
    await session.command(root, "/pin first note")
    await session.command(root, "/pin second note")
    await session.command(root, "/unpin 1")
    assert (await session.replayer(root)).pins == ["second note"]
    out = await session.command(root, "/undo")
    assert re.fullmatch(rf"Undid /unpin 1 {WHEN}: pin 'first note' is back\.", out.lines[0]), out.lines
    assert (await session.replayer(root)).pins == ["first note", "second note"]
    out = await session.command(root, "/undo")
    assert re.fullmatch(rf"Undid /pin second note {WHEN}: pin 'second note' is removed\.",
                        out.lines[0]), out.lines
    assert (await session.replayer(root)).pins == ["first note"]
    window = await session.measure(root)
    await session.store.close()
    store = await Store.open(db_path)
    again = await Session.open(store, Providers(), SessionSettings())
    try:
        assert (await again.replayer(root)).pins == ["first note"]
        assert await again.measure(root) == window
        await again.command(root, "/undo")
        assert (await again.replayer(root)).pins == []
        with pytest.raises(CommandError, match="nothing to undo"):
            await again.command(root, "/undo")
    finally:
        await again.close()
        await store.close()


async def test_a_pin_undone_in_the_parent_stays_in_a_child_forked_before(session):
    root = session.tree.root.id
    await session.command(root, "/pin shared note")
    child = (await session.command(root, "/fork --name kid")).data
    await session.command(root, "/undo")
    assert (await session.replayer(root)).pins == []
    assert (await session.replayer(child)).pins == ["shared note"]
    with pytest.raises(CommandError, match="belong to its parent"):
        await session.command(child, "/undo")


@pytest.mark.parametrize("later, shown", [
    ("/system Be terse.", "/system Be terse."),
    ("/model offline2", None),
])
async def test_undo_reaching_past_a_later_change_of_another_kind_says_so(session, later, shown):
    root, before = await _turns(session, 2)
    await session.command(root, f"/forget --ids {before[0]}")
    if later.startswith("/model"):
        # a second offline model name is not offered: write the change as /model would
        from ikigai_tui.core.events import WriteBatch
        batch = WriteBatch()
        batch.add(root, "command", {"text": "/model other", "source": "human"})
        batch.add(root, "model", {"model": "offline"})
        await session.commit(batch)
        shown = "/model other"
    else:
        await session.command(root, later)
    out = await session.command(root, "/undo")
    assert out.lines[0].startswith(f"Undid /forget --ids {before[0]} ")
    assert out.lines[1] == ("It reaches past 1 later change that /undo does not reverse, still in "
                            f"effect: {shown}.")
    # without such a change in between, one line
    await session.command(root, f"/forget --ids {before[1]}")
    assert len((await session.command(root, "/undo")).lines) == 1


async def test_undo_lines_carry_no_event_ids(session):
    root, before = await _turns(session, 2)
    await session.command(root, "/mark")
    await session.command(root, "/mark B")
    marks = (await session.command(root, "/marks")).lines
    assert marks[1] == "B  at position 4"
    assert re.fullmatch(r"#\d+  at position 4  \(unnamed\)", marks[0])
    await talk(session, root, "after the marks")
    said = []
    for command in ("/rewind B", "/pin note", "/clear"):
        await session.command(root, command)
    for _ in range(3):
        said += (await session.command(root, "/undo")).lines
    assert [line.split(" (")[0] for line in said] == ["Undid /clear", "Undid /pin note",
                                                       "Undid /rewind B"]
    for line in said + marks:
        assert "(event" not in line and "filter" not in line
    assert not any(re.search(r"#\d", line) for line in said)
