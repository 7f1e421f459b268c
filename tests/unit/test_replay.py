"""Context semantics (SPEC §4): replay of hand-built logs, and the same rules through a Session.

Every assertion is on exact event ids and contents: a context is the ordered list of
(id, kind, payload) that `Replayer.messages()` returns.
"""

from __future__ import annotations

import pytest

from ikigai_tui.core.commands import CommandError
from ikigai_tui.core.replay import EMPTY, Mark, Replayer, replay
from ikigai_tui.core.session import Session, SessionSettings
from ikigai_tui.core.store import Store
from ikigai_tui.llm.providers import Providers

# -- a tiny log builder ---------------------------------------------------------------------


class Log:
    """Builds one agent's rows with monotonic ids, the way the store numbers them."""

    def __init__(self, start: int = 1) -> None:
        self.rows: list[tuple[int, str, dict]] = []
        self.next_id = start

    def add(self, kind: str, payload: dict) -> int:
        event_id = self.next_id
        self.next_id += 1
        self.rows.append((event_id, kind, payload))
        return event_id

    def user(self, text: str) -> int:
        return self.add("user", {"content": text})

    def assistant(self, text: str) -> int:
        return self.add("assistant", {"content": text})

    def call(self, call_id: str = "c1", name: str = "slash") -> int:
        return self.add("tool_call", {"call_id": call_id, "name": name, "arguments": "{}"})

    def result(self, call_event: int, content: str = "ok") -> int:
        call_id = next(p["call_id"] for i, k, p in self.rows if i == call_event)
        return self.add("tool_result", {"call_id": call_id, "call_event": call_event,
                                        "content": content})

    def mark(self, name: str | None = None) -> int:
        return self.add("mark", {"name": name})

    def clear(self) -> int:
        return self.add("clear", {})

    def rewind(self, mark_event: int) -> int:
        name = next(p["name"] for i, k, p in self.rows if i == mark_event)
        return self.add("rewind", {"mark": name, "mark_event": mark_event})

    def forget(self, ids) -> int:
        return self.add("filter", {"mode": "forget", "ids": list(ids)})

    def remember(self, ids) -> int:
        return self.add("filter", {"mode": "remember", "ids": list(ids)})

    def compact(self, ids, summary: str = "SUMMARY") -> int:
        return self.add("compact", {"ids": list(ids), "summary": summary})

    def undo(self, target: int) -> int:
        return self.add("undo", {"target": target})

    def replayer(self, base=EMPTY) -> Replayer:
        return Replayer.from_rows(list(self.rows), base)

    def ids(self, base=EMPTY) -> list[int]:
        return [i for i, _k, _p in self.replayer(base).messages()]

    def contents(self, base=EMPTY) -> list[str]:
        return [p.get("content") for _i, _k, p in self.replayer(base).messages()]


def incremental(rows, base=EMPTY) -> Replayer:
    r = Replayer(base)
    for row in rows:
        r.apply(row)
    return r


def ids_of(r: Replayer) -> list[int]:
    return [i for i, _k, _p in r.messages()]


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
    turns = [await _say(session, root, f"turn {n}") for n in range(1, 5)]
    await session.command(root, "/mark")
    turns += [await _say(session, root, f"turn {n}") for n in range(5, 8)]
    forgotten = turns[1] + turns[5]
    await session.command(root, "/forget --ids " + ",".join(map(str, forgotten)))
    turns += [await _say(session, root, f"turn {n}") for n in range(8, 10)]
    assert (await session.command(root, "/rewind")).lines == ["Rewound to last checkpoint."]
    expected = turns[0] + turns[2] + turns[3]
    assert await _ids(session, root) == expected
    contents = [p["content"] for _i, k, p in await _messages(session, root) if k == "user"]
    assert contents == ["turn 1", "turn 3", "turn 4"]
    reopened, _marks = await _reopened_messages(db_path, [root])
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
    assert first != second
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


def test_fork_whole_context():
    parent = Log()
    a = parent.user("a")
    parent.mark("P")
    b = parent.assistant("b")
    c = parent.user("c")
    parent.forget([b])
    base = parent.replayer().snapshot()
    child = Log(start=parent.next_id)
    child.add("fork", {"parent": "p", "mark": None, "mark_event": None})
    d = child.user("d")
    r = child.replayer(base)
    assert ids_of(r) == [a, c, d]
    assert [p["content"] for _i, _k, p in r.messages()] == ["a", "c", "d"]
    assert ids_of(incremental(child.rows, base)) == [a, c, d]


def test_fork_from_a_mark_gets_only_the_messages_after_it():
    parent = Log()
    parent.user("before 1")
    parent.assistant("before 2")
    r_mark = parent.mark("R")
    brief1 = parent.user("brief 1")
    brief2 = parent.assistant("brief 2")
    base = parent.replayer().snapshot(after_mark=r_mark)
    child = Log(start=parent.next_id)
    child.add("fork", {"parent": "p", "mark": "R", "mark_event": r_mark})
    prompt = child.user("go")
    r = child.replayer(base)
    assert ids_of(r) == [brief1, brief2, prompt]
    assert [p["content"] for _i, _k, p in r.messages()] == ["brief 1", "brief 2", "go"]


def test_child_operations_apply_to_the_inherited_context():
    parent = Log()
    a = parent.user("a")
    b = parent.user("b")
    base = parent.replayer().snapshot()
    child = Log(start=parent.next_id)
    child.add("fork", {"parent": "p", "mark": None, "mark_event": None})
    m = child.mark("C")
    c = child.user("c")
    child.forget([a])
    assert child.ids(base) == [b, c]
    child.rewind(m)
    assert child.ids(base) == [b]
    child.clear()
    assert child.ids(base) == []
    # The parent's own replay is untouched by anything the child did.
    assert parent.ids() == [a, b]


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


async def _messages(session: Session, agent_id: str) -> list[tuple[int, str, dict]]:
    return (await session.replayer(agent_id)).messages()


async def _ids(session: Session, agent_id: str) -> list[int]:
    return [i for i, _k, _p in await _messages(session, agent_id)]


async def _say(session: Session, agent_id: str, text: str) -> list[int]:
    """Send a user message, wait for the reply; the ids it added to the context."""
    before = set(await _ids(session, agent_id))
    task = await session.say(agent_id, text)
    await task
    return [i for i in await _ids(session, agent_id) if i not in before]


async def test_clear_to_a_mark_set_after_the_rewind_target_is_an_error(session):
    root = session.tree.root.id
    first = await _say(session, root, "one")
    await session.command(root, "/mark A")
    await _say(session, root, "two")
    await session.command(root, "/mark B")
    await _say(session, root, "three")
    out = await session.command(root, "/rewind A")
    assert out.lines == ["Rewound to 'A'."]
    assert await _ids(session, root) == first
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
    assert await _ids(session, root) == first


async def test_clear_to_a_mark_set_before_a_clear_is_an_error(session):
    root = session.tree.root.id
    await _say(session, root, "one")
    await session.command(root, "/mark B")
    await _say(session, root, "two")
    assert (await session.command(root, "/clear")).lines == ["Context cleared."]
    assert await _ids(session, root) == []
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


# -- 4. /undo walks back ----------------------------------------------------------------------


async def test_undo_twice_walks_back_two_operations(session):
    root = session.tree.root.id
    turn1 = await _say(session, root, "one")
    turn2 = await _say(session, root, "two")
    original = await _messages(session, root)
    assert [i for i, _k, _p in original] == turn1 + turn2
    await session.command(root, f"/forget --ids {turn1[0]}")
    after_forget = await _messages(session, root)
    assert [i for i, _k, _p in after_forget] == turn1[1:] + turn2
    await session.command(root, "/clear")
    assert await _messages(session, root) == []

    out = await session.command(root, "/undo")
    assert out.lines[0].startswith("Undid /clear")
    assert await _messages(session, root) == after_forget
    out = await session.command(root, "/undo")
    assert out.lines[0].startswith("Undid /forget")
    assert await _messages(session, root) == original

    count = await session.store.count_events()
    with pytest.raises(CommandError) as err:
        await session.command(root, "/undo")
    assert "nothing to undo" in str(err.value)
    assert await session.store.count_events() == count
    assert await _messages(session, root) == original


async def test_undo_with_nothing_to_undo_is_an_error(session):
    root = session.tree.root.id
    await _say(session, root, "hello")
    await session.command(root, "/mark A")
    count = await session.store.count_events()
    with pytest.raises(CommandError) as err:
        await session.command(root, "/undo")
    assert "nothing to undo" in str(err.value)
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


# -- 5. tool call and result go together ------------------------------------------------------


def _tool_log():
    log = Log()
    u = log.user("go")
    c1 = log.call("k1")
    t1 = log.result(c1, "r1")
    a = log.assistant("done")
    c2 = log.call("k2")
    t2 = log.result(c2, "r2")
    return log, u, c1, t1, a, c2, t2


def test_forget_a_tool_call_removes_its_result_and_vice_versa():
    log, u, c1, t1, a, c2, t2 = _tool_log()
    log.forget([c1])
    assert log.ids() == [u, a, c2, t2]
    log.forget([t2])
    assert log.ids() == [u, a]


def test_remember_keeps_no_half_pair():
    log, u, c1, t1, a, c2, t2 = _tool_log()
    log.remember([u, c1, t2])  # c1 without t1, t2 without c2: both halves go
    assert log.ids() == [u]
    log2, u, c1, t1, a, c2, t2 = _tool_log()
    log2.remember([c1, t1, a])
    assert log2.ids() == [c1, t1, a]


def test_compact_takes_the_partner_along():
    log, u, c1, t1, a, c2, t2 = _tool_log()
    comp = log.compact([u, c1])  # t1 is c1's partner: summarised with it
    msgs = log.replayer().messages()
    assert [i for i, _k, _p in msgs] == [comp, a, c2, t2]
    assert msgs[0][2]["replaced"] == sorted([u, c1, t1])
    log2, u, c1, t1, a, c2, t2 = _tool_log()
    comp2 = log2.compact([t2])
    assert log2.ids() == [u, c1, t1, a, comp2]
    assert log2.replayer().messages()[-1][2]["replaced"] == [c2, t2]


def test_rewind_to_a_mark_between_call_and_result_removes_the_orphaned_call():
    log = Log()
    u = log.user("go")
    c = log.call("k1")
    m = log.mark("M")  # set by the LLM through the slash tool, mid tool call
    log.result(c, "Checkpoint 'M' created.")
    log.assistant("ok")
    log.rewind(m)
    assert log.ids() == [u]
    assert log.replayer().valid_marks() == [Mark("M", m)]


async def test_tool_pairs_through_the_session(session):
    root = session.tree.root.id
    first = await _say(session, root, "hello")
    added = await _say(session, root, "do it\n@slash mark M")
    msgs = {i: (k, p) for i, k, p in await _messages(session, root)}
    kinds = [msgs[i][0] for i in added]
    assert kinds == ["user", "tool_call", "tool_result", "assistant"]
    user, call, result, answer = added
    assert msgs[result][1]["call_event"] == call
    mark = (await session.replayer(root)).find_mark("M")
    assert call < mark.event_id < result

    # /forget of the call takes the result along.
    await session.command(root, f"/forget --ids {call}")
    assert await _ids(session, root) == first + [user, answer]
    await session.command(root, "/undo")
    # /remember without the result drops the call too.
    await session.command(root, f"/remember --ids {user},{call}")
    assert await _ids(session, root) == [user]
    await session.command(root, "/undo")
    assert await _ids(session, root) == first + added
    # /rewind to the mark set mid-exchange leaves no orphaned call.
    await session.command(root, "/rewind M")
    assert await _ids(session, root) == first + [user]


# -- 6. fork independence and restart ----------------------------------------------------------


async def _reopened_messages(db_path, agent_ids) -> dict[str, list]:
    store = await Store.open(db_path)
    try:
        fresh = await Session.open(store, Providers(), SessionSettings())
        out = {a: (await fresh.replayer(a)).messages() for a in agent_ids}
        marks = {a: (await fresh.replayer(a)).valid_marks() for a in agent_ids}
        await fresh.close()
    finally:
        await store.close()
    return out, marks


async def test_fork_independence_both_ways_and_after_restart(session, db_path):
    root = session.tree.root.id
    t1 = await _say(session, root, "one")
    await session.command(root, "/mark A")
    t2 = await _say(session, root, "two")
    out = await session.command(root, "/fork")
    child = out.data
    assert out.lines[0].startswith("Forked. Child: ")
    inherited = await _messages(session, child)
    assert [i for i, _k, _p in inherited] == t1 + t2
    assert inherited == await _messages(session, root)

    # Parent commands do not touch the child.
    await session.command(root, f"/forget --ids {t1[0]}")
    assert await _ids(session, root) == t1[1:] + t2
    assert await _messages(session, child) == inherited
    await session.command(root, "/clear")
    assert await _ids(session, root) == []
    assert await _messages(session, child) == inherited

    # Child commands do not touch the parent.
    await session.command(root, "/undo")  # parent back to t1[1:] + t2
    parent_now = await _messages(session, root)
    assert [i for i, _k, _p in parent_now] == t1[1:] + t2
    assert await _messages(session, child) == inherited
    c1 = await _say(session, child, "child says")
    await session.command(child, f"/forget --ids {t2[0]}")
    assert await _ids(session, child) == t1 + t2[1:] + c1
    assert await _messages(session, root) == parent_now
    await session.command(child, "/clear")
    assert await _ids(session, child) == []
    assert await _messages(session, root) == parent_now
    await session.command(child, "/undo")
    child_now = await _messages(session, child)
    assert [i for i, _k, _p in child_now] == t1 + t2[1:] + c1
    p2 = await _say(session, root, "parent again")
    assert await _messages(session, child) == child_now
    parent_now = await _messages(session, root)
    assert [i for i, _k, _p in parent_now] == t1[1:] + t2 + p2

    live_marks = {a: (await session.replayer(a)).valid_marks() for a in (root, child)}
    reopened, marks = await _reopened_messages(db_path, [root, child])
    assert reopened[root] == parent_now
    assert reopened[child] == child_now
    assert marks == live_marks


async def test_fork_from_a_mark_through_the_session_and_after_restart(session, db_path):
    root = session.tree.root.id
    await _say(session, root, "secret preamble")
    await session.command(root, "/mark R")
    brief = await _say(session, root, "the brief")
    out = await session.command(root, "/fork R")
    child = out.data
    assert out.lines == [f"Forked. Child: {session.tree.short_id(child)} (from R)"]
    assert await _ids(session, child) == brief
    await session.command(root, "/rewind R")
    assert await _ids(session, child) == brief
    await session.command(child, "/clear")
    assert await _ids(session, child) == []
    await session.command(child, "/undo")
    live = {a: await _messages(session, a) for a in (root, child)}
    reopened, _marks = await _reopened_messages(db_path, [root, child])
    assert reopened == live
    assert [i for i, _k, _p in reopened[child]] == brief


# -- 7. a child inherits no marks -------------------------------------------------------------


def test_snapshot_carries_no_marks():
    parent = Log()
    parent.user("a")
    parent.mark("A")
    parent.mark(None)
    base = parent.replayer().snapshot()
    child = Log(start=parent.next_id)
    child.add("fork", {"parent": "p", "mark": None, "mark_event": None})
    r = child.replayer(base)
    assert r.valid_marks() == []
    assert r.find_mark("A") is None
    assert r.latest_mark() is None


async def test_child_inherits_no_marks_through_the_session(session):
    root = session.tree.root.id
    await _say(session, root, "one")
    await session.command(root, "/mark A")
    await _say(session, root, "two")
    await session.command(root, "/mark")
    child = (await session.command(root, "/fork")).data
    r = await session.replayer(child)
    assert r.valid_marks() == []
    assert (await session.command(child, "/marks")).lines == ["No marks."]
    count = await session.store.count_events()
    with pytest.raises(CommandError) as err:
        await session.command(child, "/clear A")
    assert "'A'" in str(err.value) and "There are no valid marks." in str(err.value)
    with pytest.raises(CommandError):
        await session.command(child, "/rewind")
    parent_unnamed = (await session.replayer(root)).latest_mark()
    assert parent_unnamed.name is None
    with pytest.raises(CommandError) as err:
        await session.command(child, f"/clear {parent_unnamed.label}")
    assert parent_unnamed.label in str(err.value)
    assert await session.store.count_events() == count
    # The parent's marks are untouched, and the child's own marks stay its own.
    await session.command(child, "/mark C")
    assert [m.label for m in (await session.replayer(root)).valid_marks()][0] == "A"
    assert (await session.replayer(root)).find_mark("C") is None
