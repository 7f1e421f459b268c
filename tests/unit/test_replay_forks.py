"""Context semantics (SPEC §4), forks: a child starts from its parent's whole context or
from the messages after a mark, its operations act on that inherited context, parent and
child never affect each other (also after a restart on the same database), and a child
inherits none of its parent's marks.
"""

from __future__ import annotations

import pytest

from ikigai_tui.core.errors import CommandError
from tests.unit.replay_helpers import (
    Log, context_ids, context_messages, ids_of, incremental, reopened_messages, say,
)


# -- 2. every row of the table: fork --------------------------------------------------------


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


# -- 6. fork independence and restart ----------------------------------------------------------


async def test_fork_independence_both_ways_and_after_restart(session, db_path):
    root = session.tree.root.id
    t1 = await say(session, root, "one")
    await session.command(root, "/mark A")
    t2 = await say(session, root, "two")
    out = await session.command(root, "/fork")
    child = out.data
    assert out.lines[0].startswith("Forked. Child: ")
    inherited = await context_messages(session, child)
    assert [i for i, _k, _p in inherited] == t1 + t2
    assert inherited == await context_messages(session, root)

    # Parent commands do not touch the child.
    await session.command(root, f"/forget --ids {t1[0]}")
    assert await context_ids(session, root) == t1[1:] + t2
    assert await context_messages(session, child) == inherited
    await session.command(root, "/clear")
    assert await context_ids(session, root) == []
    assert await context_messages(session, child) == inherited

    # Child commands do not touch the parent.
    await session.command(root, "/undo")  # parent back to t1[1:] + t2
    parent_now = await context_messages(session, root)
    assert [i for i, _k, _p in parent_now] == t1[1:] + t2
    assert await context_messages(session, child) == inherited
    c1 = await say(session, child, "child says")
    await session.command(child, f"/forget --ids {t2[0]}")
    assert await context_ids(session, child) == t1 + t2[1:] + c1
    assert await context_messages(session, root) == parent_now
    await session.command(child, "/clear")
    assert await context_ids(session, child) == []
    assert await context_messages(session, root) == parent_now
    await session.command(child, "/undo")
    child_now = await context_messages(session, child)
    assert [i for i, _k, _p in child_now] == t1 + t2[1:] + c1
    p2 = await say(session, root, "parent again")
    assert await context_messages(session, child) == child_now
    parent_now = await context_messages(session, root)
    assert [i for i, _k, _p in parent_now] == t1[1:] + t2 + p2

    live_marks = {a: (await session.replayer(a)).valid_marks() for a in (root, child)}
    reopened, marks = await reopened_messages(db_path, [root, child])
    assert reopened[root] == parent_now
    assert reopened[child] == child_now
    assert marks == live_marks


async def test_fork_from_a_mark_through_the_session_and_after_restart(session, db_path):
    root = session.tree.root.id
    await say(session, root, "secret preamble")
    await session.command(root, "/mark R")
    brief = await say(session, root, "the brief")
    out = await session.command(root, "/fork R")
    child = out.data
    assert out.lines == [f"Forked. Child: {session.tree.short_id(child)} (from R)"]
    assert await context_ids(session, child) == brief
    await session.command(root, "/rewind R")
    assert await context_ids(session, child) == brief
    await session.command(child, "/clear")
    assert await context_ids(session, child) == []
    await session.command(child, "/undo")
    live = {a: await context_messages(session, a) for a in (root, child)}
    reopened, _marks = await reopened_messages(db_path, [root, child])
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
    await say(session, root, "one")
    await session.command(root, "/mark A")
    await say(session, root, "two")
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
