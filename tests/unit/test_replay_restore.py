"""`filter restore IDS` (SPEC §8, /recall): messages of the lineage come back into the
context at their place in log order, with their tool-call partners; composition with
forget, rewind, clear, compact and /undo; incremental replay equals one-shot replay."""

from __future__ import annotations

from ikigai_tui.core.replay.replayer import Replayer, Snapshot
from tests.unit.replay_helpers import Log, ids_of, incremental


def _both(log: Log, base=None) -> Replayer:
    """The one-shot replay, checked against the incremental one."""
    args = () if base is None else (base,)
    one_shot = log.replayer(*args)
    assert incremental(list(log.rows), *args).messages() == one_shot.messages()
    return one_shot


def test_restore_after_forget_puts_them_back_in_log_order():
    log = Log()
    ids = [log.user(f"m{n}") for n in range(6)]
    log.forget([ids[1], ids[2], ids[4]])
    after = log.user("later")
    log.restore([ids[4], ids[1]])
    r = _both(log)
    assert ids_of(r) == [ids[0], ids[1], ids[3], ids[4], ids[5], after]
    assert r.removal(ids[1]) is None and r.removal(ids[4]) is None
    assert r.removal(ids[2])[1] == "filter"  # still forgotten


def test_a_message_in_the_context_and_an_unknown_id_are_no_ops():
    log = Log()
    one, two = log.user("1"), log.user("2")
    mark = log.mark("M")
    log.restore([one, mark, 999])  # in the context, not a message, unknown
    r = _both(log)
    assert ids_of(r) == [one, two]


def test_restore_after_rewind_and_after_clear():
    log = Log()
    one = log.user("1")
    a = log.mark("A")
    two, three = log.user("2"), log.user("3")
    log.rewind(a)
    four = log.user("4")
    log.restore([three])
    assert ids_of(_both(log)) == [one, three, four]  # at its place: before 4
    # A later rewind to A takes it out again: it came after the mark.
    log.rewind(a)
    assert ids_of(_both(log)) == [one]
    log.clear()
    five = log.user("5")
    log.restore([two, one])
    r = _both(log)
    assert ids_of(r) == [one, two, five]
    assert r.valid_marks() == []  # a restore brings messages back, not marks


def test_undo_of_a_restore_and_restore_then_undo_of_the_forget():
    log = Log()
    ids = [log.user(f"m{n}") for n in range(4)]
    forget = log.forget([ids[1], ids[2]])
    restore = log.restore([ids[2]])
    assert ids_of(_both(log)) == [ids[0], ids[2], ids[3]]
    assert log.replayer().undo_target() == restore  # /undo reverses the restore first
    undo = log.undo(restore)
    assert ids_of(_both(log)) == [ids[0], ids[3]]
    # Undoing the forget under a restore: everything is back, the restore a no-op.
    log.rows.remove((undo, "undo", {"target": restore}))
    log.undo(forget)
    r = _both(log)
    assert ids_of(r) == ids
    assert r.undo_target() == restore


def test_a_tool_call_and_its_result_come_back_together():
    log = Log()
    u = log.user("go")
    call = log.call("c1")
    result = log.result(call)
    a = log.assistant("done")
    call2 = log.call("c2")
    result2 = log.result(call2)
    log.forget([call, call2])  # their results leave with them
    assert ids_of(log.replayer()) == [u, a]
    log.restore([call])  # the call brings its result
    log.restore([result2])  # the result brings its call
    r = _both(log)
    assert ids_of(r) == [u, call, result, a, call2, result2]
    assert r.result_of[call] == result and r.result_of[call2] == result2


def test_a_restored_message_can_leave_again_and_removal_names_the_latest():
    log = Log()
    one, two = log.user("1"), log.user("2")
    log.forget([one])
    log.restore([one])
    second = log.forget([one])
    r = _both(log)
    assert ids_of(r) == [two]
    assert r.removal(one)[0] == second


def test_restore_next_to_a_summary_keeps_log_order():
    log = Log()
    ids = [log.user(f"m{n}") for n in range(5)]
    log.forget([ids[4]])
    compact = log.compact(ids[:2])
    log.restore([ids[4]])
    r = _both(log)
    assert ids_of(r) == [compact, ids[2], ids[3], ids[4]]
    seqs = [e[0] for e in r.ctx.values()]
    assert seqs == sorted(seqs)


def test_inherited_messages_come_back_and_an_ancestors_outline_travels_in_the_event():
    parent = Log()
    before_mark = parent.user("before the mark")
    mark = parent.mark("R")
    brief = parent.user("the brief")
    base = Replayer.from_rows(list(parent.rows)).snapshot(after_mark=mark)
    assert [k for k, _e in base.entries] == [brief]
    child = Log(start=parent.next_id + 1)
    own = child.user("child's own")
    child.forget([brief])
    assert ids_of(child.replayer(base)) == [own]
    # Inherited at fork: the child knows it, the id is enough.
    child.restore([brief])
    assert ids_of(_both(child, base)) == [brief, own]
    # From before the fork's mark: the child never had it, its outline travels along;
    # without one the id is ignored.
    child.restore([before_mark])
    assert ids_of(_both(child, base)) == [brief, own]
    child.restore([before_mark], rows=[(before_mark, "user", {})])
    r = _both(child, base)
    assert ids_of(r) == [before_mark, brief, own]
    assert r.snapshot() == _both(child, base).snapshot()


def test_an_ancestors_tool_pair_from_outside_the_inheritance():
    parent = Log()
    call = parent.call("c9")
    result = parent.result(call)
    mark = parent.mark("R")
    parent.user("after")
    base = Replayer.from_rows(list(parent.rows)).snapshot(after_mark=mark)
    child = Log(start=parent.next_id + 1)
    outline = {"call_id": "c9", "call_event": call}
    child.restore([call], rows=[(call, "tool_call", {"call_id": "c9", "name": "slash"}),
                                (result, "tool_result", outline)])
    r = _both(child, base)
    assert ids_of(r)[:2] == [call, result]
    assert r.result_of[call] == result


def test_a_restore_is_one_change_for_the_incremental_readers():
    log = Log()
    one = log.user("1")
    log.forget([one])
    r = incremental(list(log.rows))
    before = r.changes
    r.apply((log.next_id, "filter", {"mode": "restore", "ids": [one]}))
    assert r.changes > before and ids_of(r) == [one]
    assert isinstance(r.base, Snapshot)


def test_a_restored_unanswered_message_keeps_its_failed_flag():
    log = Log()
    one = log.user("1")
    log.add("error", {"message": "boom", "unanswered": one})
    two = log.user("2")
    log.assistant("answer")
    assert log.replayer().ctx[one][2]["failed"] == "boom"
    log.forget([one])
    log.restore([one])
    r = _both(log)
    assert ids_of(r)[:2] == [one, two]
    assert r.ctx[one][2]["failed"] == "boom"
