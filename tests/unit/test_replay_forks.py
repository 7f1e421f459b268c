"""Context semantics (SPEC §4), forks: a child starts from its parent's whole context or
from the messages after a mark, its operations act on that inherited context, parent and
child never affect each other (also after a restart on the same database), and a child
inherits the parent's marks that fall inside what it inherits (none set after the fork).
"""

from __future__ import annotations

import pytest

from ikigai_tui.core.commands import CommandError
from ikigai_tui.core.replay import Snapshot
from tests.unit.replay_helpers import (
    Log, context_ids, context_messages, ids_of, incremental, reopened_messages, say,
)


def forked(parent: Log, mark_event: int | None = None, mark: str | None = None
           ) -> tuple[Snapshot, Log]:
    """What a child forked now from `parent` inherits (whole, or after `mark_event`),
    and the child's log, begun with its fork event."""
    base = parent.replayer().snapshot(after_mark=mark_event)
    child = Log(start=parent.next_id)
    child.add("fork", {"parent": "p", "mark": mark, "mark_event": mark_event})
    return base, child


# -- 2. every row of the table: fork --------------------------------------------------------


def test_fork_whole_context():
    parent = Log()
    a = parent.user("a")
    parent.mark("P")
    b = parent.assistant("b")
    c = parent.user("c")
    parent.forget([b])
    base, child = forked(parent)
    d = child.user("d")
    r = child.replayer(base)
    assert ids_of(r) == [a, c, d]
    assert [p["content"] for _i, _k, p in r.messages()] == ["a", "c", "d"]
    assert ids_of(incremental(child.rows, base)) == [a, c, d]


def test_fork_from_a_mark_gets_only_the_messages_after_it():
    parent = Log()
    parent.user("before 1")
    parent.mark("EARLY")
    parent.assistant("before 2")
    r_mark = parent.mark("R")
    brief1 = parent.user("brief 1")
    m_in = parent.mark("IN")
    brief2 = parent.assistant("brief 2")
    base, child = forked(parent, r_mark, "R")
    prompt = child.user("go")
    r = child.replayer(base)
    assert ids_of(r) == [brief1, brief2, prompt]
    assert [p["content"] for _i, _k, p in r.messages()] == ["brief 1", "brief 2", "go"]
    # The marks inside what it inherits come along: R (where it starts) and IN, not EARLY.
    assert [m.name for m in r.valid_marks()] == ["R", "IN"]
    child.add("rewind", {"mark": "IN", "mark_event": m_in})
    assert child.ids(base) == [brief1]
    child.add("rewind", {"mark": "R", "mark_event": r_mark})
    assert child.ids(base) == []


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


# -- 7. a child inherits the marks inside what it inherits ------------------------------------


def test_snapshot_carries_the_marks_inside_the_inheritance():
    parent = Log()
    a = parent.user("a")
    m_a = parent.mark("A")
    b = parent.user("b")
    m_unnamed = parent.mark(None)
    c = parent.user("c")
    base = parent.replayer().snapshot()
    parent.mark("LATE")  # after the fork: not the child's
    child = Log(start=parent.next_id)
    child.add("fork", {"parent": "p", "mark": None, "mark_event": None})
    d = child.user("d")
    r = child.replayer(base)
    assert [(m.name, m.event_id) for m in r.valid_marks()] == [("A", m_a), (None, m_unnamed)]
    assert r.latest_mark().event_id == m_unnamed
    assert r.find_mark("LATE") is None
    assert r.mark_position(r.find_mark("A")) == 1
    # Rewinding to an inherited mark drops what came after it, inherited or the child's.
    child.add("rewind", {"mark": "A", "mark_event": m_a})
    assert child.ids(base) == [a]
    assert [m.name for m in child.replayer(base).valid_marks()] == ["A"]
    assert ids_of(incremental(child.rows, base)) == [a]
    # /undo brings back the inherited marks the rewind invalidated.
    child.undo(child.rows[-1][0])
    r = child.replayer(base)
    assert ids_of(r) == [a, b, c, d]
    assert [m.event_id for m in r.valid_marks()] == [m_a, m_unnamed]
    # A /clear in the child invalidates them, as it does its own.
    child.clear()
    assert child.replayer(base).valid_marks() == []
    assert parent.replayer().find_mark("A") is not None


async def test_child_inherits_the_parents_marks_through_the_session(session, db_path):
    root = session.tree.root.id
    one = await say(session, root, "one")
    await session.command(root, "/mark start")
    await say(session, root, "two")
    await say(session, root, "three")
    child = (await session.command(root, "/fork --name kid")).data
    await session.command(root, "/mark later")  # after the fork: the parent's alone
    r = await session.replayer(child)
    assert [m.label for m in r.valid_marks()] == ["start"]
    assert (await session.command(child, "/rewind start")).lines == ["Rewound to 'start'."]
    assert await context_ids(session, child) == one
    with pytest.raises(CommandError) as err:
        await session.command(child, "/rewind later")
    assert "'later'" in str(err.value) and "Valid marks: start." in str(err.value)
    # The parent's context and marks are untouched; the child's own marks stay its own.
    assert len(await context_ids(session, root)) == 6
    await session.command(child, "/mark C")
    assert [m.label for m in (await session.replayer(root)).valid_marks()] == ["start", "later"]
    live = {a: (await session.replayer(a)).valid_marks() for a in (root, child)}
    reopened, marks = await reopened_messages(db_path, [root, child])
    assert marks == live
    assert [i for i, _k, _p in reopened[child]] == one
