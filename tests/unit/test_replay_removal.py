"""Which event took a message out of the context (`Replayer.removal`), for the screen's
out-of-context look: by hand for each kind of change, and against a slow oracle (replay
every prefix of the effective log) on generated logs, one-shot and incremental alike."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ikigai_tui.core.events import CONTEXT_MESSAGE_KINDS
from ikigai_tui.core.replay.replayer import Replayer

from .replay_helpers import Log, incremental
from .test_replay_properties import Builder, draw_base


def kind_of(r: Replayer, key: int) -> str | None:
    row = r.removal(key)
    return None if row is None else row[1]


def test_each_change_names_itself():
    log = Log()
    u1, a1 = log.user("one"), log.assistant("1")
    alpha = log.mark("alpha")
    u2, a2 = log.user("two"), log.assistant("2")
    rewind = log.rewind(alpha)
    u3 = log.user("three")
    forget = log.forget([u3])
    u4 = log.user("four")
    clear = log.clear()
    u5 = log.user("five")
    r = log.replayer()
    assert r.removal(u5) is None  # in the context
    assert r.removal(alpha) is None  # never a message
    assert [r.removal(i)[0] for i in (u1, a1)] == [clear, clear]
    assert [r.removal(i)[0] for i in (u2, a2)] == [rewind, rewind]
    assert r.removal(u2)[2]["mark"] == "alpha"  # the label can name the mark
    assert r.removal(u3)[0] == forget
    assert r.removal(u4)[0] == clear
    # The same, built event by event.
    again = incremental(log.rows)
    assert again.removed == r.removed


def test_remember_drops_what_it_does_not_keep_with_its_tool_partner():
    log = Log()
    u1 = log.user("keep me")
    call = log.call()
    result = log.result(call)
    remember = log.remember([u1])
    r = log.replayer()
    assert r.removal(u1) is None
    assert r.removal(call)[0] == remember and r.removal(result)[0] == remember


def test_undo_restores_the_look():
    log = Log()
    u1 = log.user("one")
    clear = log.clear()
    r = incremental(log.rows)
    assert r.removal(u1)[0] == clear
    undo = (log.next_id, "undo", {"target": clear})
    r.apply(undo)
    assert r.removal(u1) is None


def test_a_compacted_message_is_summarised_until_its_summary_goes():
    log = Log()
    u1, a1 = log.user("one"), log.assistant("1")
    compact = log.compact([u1, a1])
    assert kind_of(log.replayer(), u1) == "compact"
    clear = log.clear()
    assert log.replayer().removal(u1)[0] == clear


def oracle(rows, base, key) -> int | None:
    """The effective event after which `key` last left the context (a restore may have
    brought it back in between); a compact only while its summary is still in the final
    context (else what removed the summary)."""
    undone = {p["target"] for _i, k, p in rows if k == "undo"}
    effective = [row for row in rows if row[1] != "undo" and row[0] not in undone]
    final = Replayer.from_rows(list(effective), base).ctx
    if key in final:
        return None
    present = key in dict(base.entries)
    left = None
    for n, row in enumerate(effective):
        ctx = Replayer.from_rows(effective[: n + 1], base).ctx
        if key in ctx:
            present = True
        elif present:
            present, left = False, row
    if left is not None and left[1] == "compact" and left[0] not in final:
        return oracle(rows, base, left[0])
    return None if left is None else left[0]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_removal_matches_a_replay_of_every_prefix(data):
    base, start = draw_base(data)
    b = Builder(data, start=start, base=base)
    b.run(max_steps=25)
    one_shot = Replayer.from_rows(list(b.rows), base)
    keys = [k for k, _e in base.entries] + [i for i, k, _p in b.rows if k in CONTEXT_MESSAGE_KINDS]
    for key in keys:
        want = oracle(b.rows, base, key)
        got = one_shot.removal(key)
        assert (None if got is None else got[0]) == want, key
        live = b.live.removal(key)
        assert (None if live is None else live[0]) == want, key


def test_a_summary_reaching_past_the_mark_goes_with_the_rewind():
    log = Log()
    u1 = log.user("one")
    mark = log.mark("m")
    a1 = log.assistant("1")
    log.compact([u1, a1])  # its summary sits at u1's place but covers a1, after the mark
    rewind = log.rewind(mark)
    r = log.replayer()
    assert r.removal(u1)[0] == rewind and r.removal(a1)[0] == rewind
