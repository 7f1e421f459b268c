"""Context semantics (SPEC §4), tool pairs: a tool call and its result enter and leave the
context together — /forget, /remember and /compact take the partner along, and a rewind to
a mark set between a call and its result leaves no orphaned call — in pure replay and
through a Session with the offline model's slash tool.
"""

from __future__ import annotations

from ikigai_tui.core.replay.replayer import Mark
from tests.unit.replay_helpers import Log, context_ids, context_messages, say


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
    first = await say(session, root, "hello")
    added = await say(session, root, "do it\n@slash mark M")
    msgs = {i: (k, p) for i, k, p in await context_messages(session, root)}
    kinds = [msgs[i][0] for i in added]
    assert kinds == ["user", "tool_call", "tool_result", "assistant"]
    user, call, result, answer = added
    assert msgs[result][1]["call_event"] == call
    mark = (await session.replayer(root)).find_mark("M")
    assert call < mark.event_id < result

    # /forget of the call takes the result along.
    await session.command(root, f"/forget --ids {call}")
    assert await context_ids(session, root) == first + [user, answer]
    await session.command(root, "/undo")
    # /remember without the result drops the call too.
    await session.command(root, f"/remember --ids {user},{call}")
    assert await context_ids(session, root) == [user]
    await session.command(root, "/undo")
    assert await context_ids(session, root) == first + added
    # /rewind to the mark set mid-exchange leaves no orphaned call.
    await session.command(root, "/rewind M")
    assert await context_ids(session, root) == first + [user]
