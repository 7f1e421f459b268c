"""Replay of `tool_output` events (/forget --tool-results, issue 25 item 5): a cleared
tool result stays in the context, its entry carrying the stub the request sends; the
one-shot replay and the incremental one agree; /undo and a `restore` bring the text
back; a fork inherits the cleared state; a forgotten-then-restored result comes back
whole."""

from __future__ import annotations

from ikigai_tui.core.replay.request import build_messages
from ikigai_tui.core.tool_results import cleared_stub
from tests.unit.replay_helpers import Log, incremental


def _log():
    log = Log()
    u = log.user("go")
    c1 = log.call("k1", name="bash")
    t1 = log.result(c1, "a long build log")
    c2 = log.call("k2", name="bash")
    t2 = log.result(c2, "the second output")
    return log, u, c1, t1, c2, t2


def clear(log: Log, ids, tokens) -> int:
    return log.add("tool_output", {"action": "clear", "ids": list(ids), "tokens": list(tokens)})


def sent(r) -> list[str | None]:
    return [m.get("content") for m in build_messages(r) if m["role"] == "tool"]


def test_a_cleared_result_stays_and_sends_its_stub_in_both_replays():
    log, u, c1, t1, c2, t2 = _log()
    clear(log, [t1], [12_400])
    for r in (log.replayer(), incremental(log.rows)):
        assert [k for k in r.ctx] == [u, c1, t1, c2, t2]
        assert sent(r) == [f"[output cleared: 12.4K tokens; /restore {t1}]", "the second output"]
        assert list(r.cleared) == [t1]
    assert cleared_stub(7, 850) == "[output cleared: 850 tokens; /restore 7]"


def test_undo_and_restore_bring_the_text_back():
    log, u, c1, t1, c2, t2 = _log()
    op = clear(log, [t1, t2], [100, 200])
    log.add("tool_output", {"action": "restore", "ids": [t2]})
    assert sent(log.replayer()) == [cleared_stub(t1, 100), "the second output"]
    log.undo(op)
    for r in (log.replayer(), incremental(log.rows)):
        assert sent(r) == ["a long build log", "the second output"]
        assert not r.cleared


def test_a_fork_inherits_the_cleared_results():
    log, u, c1, t1, c2, t2 = _log()
    clear(log, [t1], [100])
    snapshot = log.replayer().snapshot()
    child = Log(start=100).replayer(snapshot)
    assert sent(child) == [cleared_stub(t1, 100), "the second output"]
    assert set(child.cleared) == {t1}


def test_a_forgotten_cleared_result_restored_comes_back_whole():
    log, u, c1, t1, c2, t2 = _log()
    clear(log, [t1], [100])
    log.forget([t1])
    log.restore([t1])
    r = log.replayer()
    assert sent(r) == ["a long build log", "the second output"]
    assert not r.cleared
