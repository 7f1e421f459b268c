"""Context semantics (SPEC §4), the table itself: the composition example of the design
notes, then the rows for messages, /clear, /mark, /rewind, /forget, /remember and /compact
on hand-built logs, and the rule that marks after a rewind target or a clear are invalid,
both in pure replay and through a Session's commands. Every assertion is on exact event
ids and contents.
"""

from __future__ import annotations

import pytest

from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.replay.replayer import Mark, replay
from tests.unit.replay_helpers import (
    Log, context_ids, context_messages, ids_of, incremental, reopened_messages, say,
)


# -- 1. the composition example --------------------------------------------------------------


def test_composition_example_of_the_design_notes():
    """1-100, /mark, 101-150, forget 50-75 and 140-145, 151-200, /rewind -> 1-49, 76-100."""
    log = Log()
    msg: dict[int, int] = {}  # message number -> event id
    for n in range(1, 101):
        msg[n] = log.user(f"m{n}")
    mark = log.mark(None)
    for n in range(101, 151):
        msg[n] = log.assistant(f"m{n}") if n % 2 else log.user(f"m{n}")
    log.forget([msg[n] for n in list(range(50, 76)) + list(range(140, 146))])
    for n in range(151, 201):
        msg[n] = log.user(f"m{n}")
    log.rewind(mark)

    expected_numbers = list(range(1, 50)) + list(range(76, 101))
    assert log.ids() == [msg[n] for n in expected_numbers]
    assert log.contents() == [f"m{n}" for n in expected_numbers]
    # The same function run incrementally, and the module-level pure function, agree.
    assert ids_of(incremental(log.rows)) == [msg[n] for n in expected_numbers]
    assert [i for i, _k, _p in replay(list(log.rows))] == [msg[n] for n in expected_numbers]
    # The mark itself stays valid after the rewind.
    assert log.replayer().valid_marks() == [Mark(None, mark)]


async def test_composition_example_through_the_session(session, db_path):
    """The same composition with real turns: forgotten turns and the tail after the mark go."""
    root = session.tree.root.id
    turns = [await say(session, root, f"turn {n}") for n in range(1, 5)]
    await session.command(root, "/mark")
    turns += [await say(session, root, f"turn {n}") for n in range(5, 8)]
    forgotten = turns[1] + turns[5]
    await session.command(root, "/forget --ids " + ",".join(map(str, forgotten)))
    turns += [await say(session, root, f"turn {n}") for n in range(8, 10)]
    assert (await session.command(root, "/rewind")).lines == ["Rewound to last checkpoint."]
    expected = turns[0] + turns[2] + turns[3]
    assert await context_ids(session, root) == expected
    contents = [p["content"] for _i, k, p in await context_messages(session, root) if k == "user"]
    assert contents == ["turn 1", "turn 3", "turn 4"]
    reopened, _marks = await reopened_messages(db_path, [root])
    assert [i for i, _k, _p in reopened[root]] == expected


# -- 2. every row of the table ---------------------------------------------------------------


def test_message_kinds_are_appended_in_log_order():
    log = Log()
    u = log.user("question")
    c = log.call("k1")
    t = log.result(c, "tool says")
    a = log.assistant("answer")
    log.add("system", {"content": "be brief"})
    log.add("usage", {"model": "offline", "input_tokens": 1, "output_tokens": 1})
    r = log.replayer()
    assert r.messages() == [
        (u, "user", {"content": "question"}),
        (c, "tool_call", {"call_id": "k1", "name": "slash", "arguments": "{}"}),
        (t, "tool_result", {"call_id": "k1", "call_event": c, "content": "tool says"}),
        (a, "assistant", {"content": "answer"}),
    ]
    # A system message sets the prompt, it does not enter the context; metadata never does.
    assert r.system == "be brief"


def test_clear_empties_the_context_and_invalidates_every_mark():
    log = Log()
    log.user("a")
    log.mark("A")
    log.user("b")
    log.mark(None)
    log.mark("B")
    log.clear()
    r = log.replayer()
    assert r.messages() == []
    assert r.valid_marks() == []
    assert r.find_mark("A") is None and r.find_mark("B") is None
    assert r.latest_mark() is None
    # Messages after the clear are the new context; a new mark after it is valid.
    c = log.user("after")
    m = log.mark("A")
    r = log.replayer()
    assert ids_of(r) == [c]
    assert r.valid_marks() == [Mark("A", m)]
    assert r.mark_position(r.find_mark("A")) == 1


def test_rewind_to_a_mark_invalidated_by_clear_changes_nothing():
    log = Log()
    log.user("a")
    m = log.mark("A")
    log.clear()
    b = log.user("b")
    log.rewind(m)  # a stale event (the command refuses it); replay must ignore it
    assert log.ids() == [b]


def test_named_and_unnamed_marks_record_the_position():
    log = Log()
    log.user("1")
    log.user("2")
    a = log.mark("A")
    log.user("3")
    anon = log.mark(None)
    log.user("4")
    r = log.replayer()
    assert r.valid_marks() == [Mark("A", a), Mark(None, anon)]
    assert r.find_mark("A") == Mark("A", a)
    assert r.mark_position(r.find_mark("A")) == 2
    assert r.mark_position(Mark(None, anon)) == 3
    assert Mark(None, anon).label == f"#{anon}"
    assert r.latest_mark() == Mark(None, anon)
    # Two unnamed marks are two marks.
    anon2 = log.mark(None)
    assert log.replayer().valid_marks() == [Mark("A", a), Mark(None, anon), Mark(None, anon2)]


def test_reusing_a_mark_name_moves_it():
    log = Log()
    log.user("1")
    first = log.mark("A")
    b = log.mark("B")
    log.user("2")
    log.user("3")
    second = log.mark("A")
    r = log.replayer()
    assert r.find_mark("A") == Mark("A", second)
    assert r.valid_marks() == [Mark("B", b), Mark("A", second)]  # one A, now the latest
    assert r.mark_position(r.find_mark("A")) == 3
    assert Mark("A", first) not in r.valid_marks()
    # Rewinding to A now goes to the new position, not the old one.
    log.user("4")
    log.rewind(second)
    assert log.contents() == ["1", "2", "3"]


def test_rewind_removes_later_messages_and_later_marks_but_keeps_the_mark():
    log = Log()
    one = log.user("1")
    two = log.assistant("2")
    a = log.mark("A")
    log.user("3")
    log.mark("B")
    log.mark(None)
    log.assistant("4")
    log.rewind(a)
    r = log.replayer()
    assert ids_of(r) == [one, two]
    assert r.valid_marks() == [Mark("A", a)]
    assert r.find_mark("B") is None
    # New messages go after the mark; rewinding to it again removes them too.
    five = log.user("5")
    assert log.ids() == [one, two, five]
    log.rewind(a)
    assert log.ids() == [one, two]
    assert log.replayer().valid_marks() == [Mark("A", a)]


def test_filter_forget_removes_exactly_those_messages():
    log = Log()
    ids = [log.user(f"m{n}") for n in range(1, 7)]
    log.forget([ids[1], ids[3], 999])  # an id that is not in the context is ignored
    assert log.ids() == [ids[0], ids[2], ids[4], ids[5]]
    log.forget([ids[1], ids[5]])  # forgetting again is harmless
    assert log.ids() == [ids[0], ids[2], ids[4]]


def test_filter_remember_keeps_only_those_messages():
    log = Log()
    ids = [log.user(f"m{n}") for n in range(1, 7)]
    log.remember([ids[4], ids[1], 999])
    assert log.ids() == [ids[1], ids[4]]  # context order, not the order listed
    later = log.user("later")
    assert log.ids() == [ids[1], ids[4], later]


def test_compact_replaces_listed_messages_by_one_summary_at_the_first():
    log = Log()
    ids = [log.user(f"m{n}") for n in range(1, 6)]
    comp = log.compact([ids[3], ids[1]], summary="S")
    msgs = log.replayer().messages()
    assert [i for i, _k, _p in msgs] == [ids[0], comp, ids[2], ids[4]]
    kind, payload = msgs[1][1], msgs[1][2]
    assert kind == "summary"
    assert payload["content"] == "S"
    assert payload["replaced"] == [ids[1], ids[3]]
    # A contiguous run collapses in place.
    log2 = Log()
    ids2 = [log2.user(f"m{n}") for n in range(1, 6)]
    comp2 = log2.compact(ids2[:3], summary="first three")
    assert log2.ids() == [comp2, ids2[3], ids2[4]]
    assert log2.contents() == ["first three", "m4", "m5"]


# -- 3. marks after a rewind or a clear are invalid -------------------------------------------


def test_marks_set_after_the_rewind_target_are_invalid_in_pure_replay():
    log = Log()
    log.user("1")
    a = log.mark("A")
    log.user("2")
    log.mark("B")
    log.mark(None)
    log.rewind(a)
    r = log.replayer()
    assert r.find_mark("B") is None
    assert [m.label for m in r.valid_marks()] == ["A"]
    assert "B" in r.mark_names_seen


async def test_clear_to_a_mark_set_after_the_rewind_target_is_an_error(session):
    root = session.tree.root.id
    first = await say(session, root, "one")
    await session.command(root, "/mark A")
    await say(session, root, "two")
    await session.command(root, "/mark B")
    await say(session, root, "three")
    out = await session.command(root, "/rewind A")
    assert out.lines == ["Rewound to 'A'."]
    assert await context_ids(session, root) == first
    count = await session.store.count_events()
    with pytest.raises(CommandError) as err:
        await session.command(root, "/clear B")
    text = str(err.value)
    assert "'B'" in text
    assert "Valid marks: A." in text
    assert await session.store.count_events() == count
    with pytest.raises(CommandError) as err:
        await session.command(root, "/rewind B")
    assert "'B'" in str(err.value) and "Valid marks: A." in str(err.value)
    assert await session.store.count_events() == count
    assert await context_ids(session, root) == first


async def test_clear_to_a_mark_set_before_a_clear_is_an_error(session):
    root = session.tree.root.id
    await say(session, root, "one")
    await session.command(root, "/mark B")
    await say(session, root, "two")
    assert (await session.command(root, "/clear")).lines == ["Context cleared."]
    assert await context_ids(session, root) == []
    count = await session.store.count_events()
    with pytest.raises(CommandError) as err:
        await session.command(root, "/clear B")
    assert "'B'" in str(err.value)
    assert "There are no valid marks." in str(err.value)
    assert await session.store.count_events() == count
    # A mark set after the clear is listed as the valid one.
    await session.command(root, "/mark C")
    with pytest.raises(CommandError) as err:
        await session.command(root, "/clear B")
    assert "'B'" in str(err.value) and "Valid marks: C." in str(err.value)
    assert await session.store.count_events() == count + 2  # /mark C wrote command + mark
    with pytest.raises(CommandError) as err:
        await session.command(root, "/clear NOPE")
    assert "'NOPE'" in str(err.value) and "Valid marks: C." in str(err.value)
    assert await session.store.count_events() == count + 2
