"""Context semantics (SPEC §4), /undo: undoing each context operation (/clear, /rewind,
/forget, /remember, /compact, and the pins and budget) on hand-built logs restores
exactly the earlier context, marks and settings, an older operation can be undone under
later ones, and repeated /undo walks back one operation at a time, in pure replay and
through a Session, until "nothing to undo".
"""

from __future__ import annotations

import pytest

from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.replay.replayer import Mark, Replayer
from tests.unit.replay_helpers import Log, context_messages, ids_of, incremental, say


# -- 2. every row of the table: undo --------------------------------------------------------


def test_undo_clear_restores_context_and_marks():
    log = Log()
    one = log.user("1")
    a = log.mark("A")
    two = log.user("2")
    clear = log.clear()
    three = log.user("3")
    log.undo(clear)
    r = log.replayer()
    assert ids_of(r) == [one, two, three]
    assert r.valid_marks() == [Mark("A", a)]
    assert r.undo_target() is None


def test_undo_rewind_restores_messages_and_later_marks():
    log = Log()
    one = log.user("1")
    a = log.mark("A")
    two = log.user("2")
    b = log.mark("B")
    three = log.user("3")
    rw = log.rewind(a)
    four = log.user("4")
    log.undo(rw)
    r = log.replayer()
    assert ids_of(r) == [one, two, three, four]
    assert r.valid_marks() == [Mark("A", a), Mark("B", b)]


def test_undo_forget_and_undo_remember():
    log = Log()
    ids = [log.user(f"m{n}") for n in range(1, 5)]
    f = log.forget([ids[0], ids[2]])
    assert log.ids() == [ids[1], ids[3]]
    log.undo(f)
    assert log.ids() == ids
    rem = log.remember([ids[3]])
    assert log.ids() == [ids[3]]
    log.undo(rem)
    assert log.ids() == ids


def test_undo_compact_restores_the_messages():
    log = Log()
    ids = [log.user(f"m{n}") for n in range(1, 5)]
    comp = log.compact(ids[:2])
    assert log.ids() == [comp, ids[2], ids[3]]
    log.undo(comp)
    assert log.ids() == ids
    assert log.contents() == ["m1", "m2", "m3", "m4"]


def test_undo_of_an_older_operation_keeps_the_later_ones():
    log = Log()
    ids = [log.user(f"m{n}") for n in range(1, 6)]
    first = log.forget([ids[0]])
    log.forget([ids[4]])
    log.undo(first)
    assert log.ids() == ids[:4]


# -- 4. /undo walks back ----------------------------------------------------------------------


async def test_undo_twice_walks_back_two_operations(session):
    root = session.tree.root.id
    turn1 = await say(session, root, "one")
    turn2 = await say(session, root, "two")
    original = await context_messages(session, root)
    assert [i for i, _k, _p in original] == turn1 + turn2
    await session.command(root, f"/forget --ids {turn1[0]}")
    after_forget = await context_messages(session, root)
    assert [i for i, _k, _p in after_forget] == turn1[1:] + turn2
    await session.command(root, "/clear")
    assert await context_messages(session, root) == []

    out = await session.command(root, "/undo")
    assert out.lines[0].startswith("Undid /clear")
    assert await context_messages(session, root) == after_forget
    out = await session.command(root, "/undo")
    assert out.lines[0].startswith("Undid /forget")
    assert await context_messages(session, root) == original

    count = await session.store.count_events()
    with pytest.raises(CommandError) as err:
        await session.command(root, "/undo")
    assert "nothing to undo" in str(err.value)
    assert await session.store.count_events() == count
    assert await context_messages(session, root) == original


async def test_undo_with_nothing_to_undo_is_an_error(session):
    root = session.tree.root.id
    await say(session, root, "hello")
    await session.command(root, "/mark A")
    count = await session.store.count_events()
    with pytest.raises(CommandError) as err:
        await session.command(root, "/undo")
    assert "nothing to undo" in str(err.value)
    # it names every kind of change /undo reverses, the later ones included
    for command in ("/clear", "/rewind", "/forget", "/remember", "/restore", "/compact", "/pin"):
        assert command in str(err.value)
    assert await session.store.count_events() == count


def test_pure_undo_walks_back_in_order():
    log = Log()
    ids = [log.user(f"m{n}") for n in range(1, 5)]
    r = incremental(log.rows)
    f = log.forget([ids[0]])
    r.apply(log.rows[-1])
    comp = log.compact([ids[1], ids[2]])
    r.apply(log.rows[-1])
    assert r.undo_target() == comp
    log.undo(comp)
    r.apply(log.rows[-1])
    assert ids_of(r) == ids[1:]
    assert r.undo_target() == f
    log.undo(f)
    r.apply(log.rows[-1])
    assert ids_of(r) == ids
    assert r.undo_target() is None
    assert ids_of(log.replayer()) == ids


# -- pins and the budget: context changes /undo reverses too (issue 13, items 4 and 20) ---------


def test_undo_pin_unpin_and_budget_in_pure_replay():
    log = Log()
    log.user("1")
    a = log.add("pin", {"text": "A"})
    b = log.add("pin", {"text": "B"})
    un = log.add("unpin", {"index": 1})
    budget = log.add("budget", {"budget": 5_000})
    r = log.replayer()
    assert (r.pins, r.budget, r.budget_event) == (["B"], 5_000, budget)
    assert r.undo_target() == budget
    for target, pins, budget_now in ((budget, ["B"], None), (un, ["A", "B"], None),
                                     (b, ["A"], None), (a, [], None)):
        log.undo(target)
        for state in (log.replayer(), incremental(log.rows)):
            assert (state.pins, state.budget) == (pins, budget_now)
    assert log.replayer().undo_target() is None
    assert log.ids() == [1]


def test_undoing_shows_what_an_undo_would_leave_without_changing_the_state():
    log = Log()
    one = log.user("1")
    two = log.user("2")
    forget = log.forget([one])
    pin = log.add("pin", {"text": "P"})
    r = log.replayer()
    after = Replayer.undoing(list(r.history), r.base, set(r.undone) | {forget})
    assert [i for i, _k, _p in after.messages()] == [one, two] and after.pins == ["P"]
    assert ids_of(r) == [two] and r.undone == set()
    assert after.undo_target() == pin
