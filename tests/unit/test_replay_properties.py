"""Property tests for replay (SPEC §4).

1. Incremental replay (one event at a time) always equals one-shot replay of the log.
2. Through the real session and SQLite: a fresh Session on the same file computes the
   same context for every agent (the "restart shows exactly what it showed" rule).
3. /undo right after a context command restores exactly the previous context and marks.

Sequences are built with a live Replayer so that only valid commands are generated,
the way the command layer would write them.
"""

from __future__ import annotations

import asyncio
import os
import tempfile

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.events import CONTEXT_MESSAGE_KINDS as MESSAGE_KINDS
from ikigai_tui.core.events import WriteBatch
from ikigai_tui.core.replay.replayer import EMPTY, Replayer, Snapshot
from ikigai_tui.core.session import Session, SessionSettings
from ikigai_tui.store.sqlite.store import Store
from ikigai_tui.llm.providers import Providers

MARK_NAMES = ["A", "B", "C", None]
CONTEXT_OPS = ["clear", "rewind", "forget", "remember", "compact", "restore"]


# -- pure generator ----------------------------------------------------------------------------


class Builder:
    """Draws valid events one by one, applying each to a live Replayer as it goes."""

    def __init__(self, data, start: int = 1, base: Snapshot = EMPTY) -> None:
        self.data = data
        self.next_id = start
        self.base = base
        self.rows: list[tuple[int, str, dict]] = []
        self.live = Replayer(base)
        self.call_counter = 0

    def emit(self, kind: str, payload: dict) -> int:
        event_id = self.next_id
        self.next_id += 1
        row = (event_id, kind, payload)
        self.rows.append(row)
        self.live.apply(row)
        return event_id

    def present(self) -> list[int]:
        return list(self.live.ctx)

    def subset(self, min_size: int = 0) -> list[int]:
        present = self.present()
        picked = self.data.draw(
            st.lists(st.sampled_from(present), min_size=min_size, unique=True), label="ids"
        )
        if self.data.draw(st.booleans(), label="add absent id"):
            picked.append(10_000 + self.next_id)  # not in the context: must be ignored
        return picked

    def available(self) -> list[str]:
        ops = ["user", "assistant", "pair", "pair_mark", "pending_call", "mark", "clear",
               "noise"]
        if self.live.valid_marks():
            ops.append("rewind")
        if self.live.ctx:
            ops += ["forget", "remember", "compact"]
        if self.live.undo_target() is not None:
            ops.append("undo")
        if self.gone():
            ops.append("restore")
        return ops

    def gone(self) -> list[int]:
        """Messages this agent had (its own or inherited) that are out of its context."""
        live = self.live
        had = [k for k, e in self.base.entries if e[1] != "summary"]
        had += [row[0] for row in live.history if row[1] in MESSAGE_KINDS]
        return [k for k in had if k not in live.ctx]

    def step(self, op: str | None = None) -> str:
        if op is None:
            op = self.data.draw(st.sampled_from(self.available()), label="op")
        d = self.data
        if op == "user":
            self.emit("user", {"content": f"u{self.next_id}"})
        elif op == "assistant":
            self.emit("assistant", {"content": f"a{self.next_id}"})
        elif op in ("pair", "pair_mark", "pending_call"):
            self.call_counter += 1
            cid = f"call{self.call_counter}"
            call = self.emit("tool_call", {"call_id": cid, "name": "slash", "arguments": "{}"})
            if op == "pending_call":
                return op
            if op == "pair_mark":  # the LLM set a mark through the slash tool mid-exchange
                self.emit("mark", {"name": d.draw(st.sampled_from(MARK_NAMES), label="name")})
            self.emit("tool_result", {"call_id": cid, "call_event": call,
                                      "content": f"r{self.next_id}"})
        elif op == "mark":
            self.emit("mark", {"name": d.draw(st.sampled_from(MARK_NAMES), label="name")})
        elif op == "clear":
            self.emit("clear", {})
        elif op == "rewind":
            mark = d.draw(st.sampled_from(self.live.valid_marks()), label="mark")
            self.emit("rewind", {"mark": mark.name, "mark_event": mark.event_id})
        elif op == "forget":
            self.emit("filter", {"mode": "forget", "ids": self.subset(min_size=1)})
        elif op == "remember":
            self.emit("filter", {"mode": "remember", "ids": self.subset()})
        elif op == "compact":
            self.emit("compact", {"ids": self.subset(min_size=1), "summary": f"s{self.next_id}"})
        elif op == "restore":
            gone = self.gone()
            picked = d.draw(st.lists(st.sampled_from(gone), unique=True), label="restore") if gone else []
            if self.live.ctx and d.draw(st.booleans(), label="restore a present id"):
                picked.append(d.draw(st.sampled_from(self.present()), label="present"))
            if d.draw(st.booleans(), label="restore an unknown id"):
                picked.append(10_000 + self.next_id)
            self.emit("filter", {"mode": "restore", "ids": picked})
        elif op == "undo":
            self.emit("undo", {"target": self.live.undo_target()})
        elif op == "noise":
            kind = d.draw(st.sampled_from(["usage", "command", "model", "pin", "unpin", "budget"]),
                          label="noise")
            payload = {"usage": {"model": "m", "input_tokens": 1, "output_tokens": 1},
                       "command": {"text": "/marks", "source": "human"},
                       "model": {"model": f"m{self.next_id}"},
                       "pin": {"text": f"p{self.next_id}"},
                       "unpin": {"index": 1 + self.next_id % 3},
                       "budget": {"budget": self.next_id * 100 % 700}}[kind]
            self.emit(kind, payload)
        return op

    def run(self, max_steps: int = 40) -> None:
        for _ in range(self.data.draw(st.integers(0, max_steps), label="steps")):
            self.step()


def state(r: Replayer):
    return (r.messages(), r.valid_marks(), r.undo_target(), r.model, list(r.pins), r.budget,
            r.budget_event, r.snapshot(), r.latest_mark())


def draw_base(data) -> tuple[Snapshot, int]:
    """Either no parent, or a parent log forked whole or after one of its valid marks."""
    if not data.draw(st.booleans(), label="forked"):
        return EMPTY, 1
    parent = Builder(data)
    parent.run(max_steps=15)
    after = None
    marks = parent.live.valid_marks()
    if marks and data.draw(st.booleans(), label="from mark"):
        after = data.draw(st.sampled_from(marks), label="fork mark").event_id
    # The parent's snapshot from its live state must equal the one from a one-shot replay.
    live_snap = parent.live.snapshot(after_mark=after)
    assert live_snap == Replayer.from_rows(list(parent.rows)).snapshot(after_mark=after)
    return live_snap, parent.next_id + 1


def orphans(r: Replayer) -> tuple[set[int], set[int]]:
    """Results whose call is not in the context; calls whose committed result is not."""
    ctx = r.ctx
    lone_results = {i for i, e in ctx.items()
                    if e[1] == "tool_result" and e[2]["call_event"] not in ctx}
    lone_calls = {i for i, e in ctx.items()
                  if e[1] == "tool_call" and r.result_of.get(i) is not None
                  and r.result_of[i] not in ctx}
    return lone_results, lone_calls


PURE = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PURE
@given(data=st.data())
def test_incremental_replay_equals_one_shot_replay(data):
    base, start = draw_base(data)
    inherited_orphans = {k for k, e in base.entries
                         if e[1] == "tool_result"
                         and e[2]["call_event"] not in {kk for kk, _ in base.entries}}
    b = Builder(data, start=start, base=base)
    for _ in range(data.draw(st.integers(0, 40), label="steps")):
        b.step()
        one_shot = Replayer.from_rows(list(b.rows), base)
        assert state(b.live) == state(one_shot)
        # Same with apply_many on a fresh replayer.
        again = Replayer(base)
        again.apply_many(list(b.rows))
        assert state(again) == state(one_shot)
        # No filter/compact/rewind leaves half a tool exchange behind.
        lone_results, lone_calls = orphans(b.live)
        assert lone_calls == set()
        assert lone_results <= inherited_orphans
        # The context stays in log order (summaries sit at their first message's place).
        seqs = [e[0] for e in b.live.ctx.values()]
        assert seqs == sorted(seqs)


@PURE
@given(data=st.data(), op=st.sampled_from(CONTEXT_OPS))
def test_undo_right_after_a_context_command_restores_the_previous_context(data, op):
    base, start = draw_base(data)
    b = Builder(data, start=start, base=base)
    b.run(max_steps=30)
    # Make the chosen command applicable.
    if op == "rewind" and not b.live.valid_marks():
        b.step("user")
        b.step("mark")
        b.step("assistant")
    if op in ("forget", "remember", "compact") and not b.live.ctx:
        b.step("user")
        b.step("pair")
    before = (b.live.messages(), b.live.valid_marks())
    before_target = b.live.undo_target()
    b.step(op)
    op_id = b.rows[-1][0]
    assert b.live.undo_target() == op_id
    b.step("undo")
    assert (b.live.messages(), b.live.valid_marks()) == before
    assert b.live.undo_target() == before_target
    one_shot = Replayer.from_rows(list(b.rows), base)
    assert (one_shot.messages(), one_shot.valid_marks()) == before


# -- through the real session -----------------------------------------------------------------

SAY_TEXTS = [
    "hello",
    "tell me more",
    "note this\n@slash mark B",
    "@slash marks",
    "@slash mark",
    "wrap up\n@slash clear",
    "@slash rewind",
    "delegate\n@slash fork",
]


def _restorable(r: Replayer) -> list[int]:
    """This agent's own and inherited messages out of its context, but summarised ones
    (/restore refuses those)."""
    had = [k for k, e in r.base.entries if e[1] != "summary"]
    had += [row[0] for row in r.history if row[1] in MESSAGE_KINDS]
    summarised = {i for s in r.summaries for i in r.ctx[s][2].get("replaced", ())}
    return [k for k in had if k not in r.ctx and k not in summarised
            and (r.removal(k) is None or r.removal(k)[1] != "compact")]


async def _snapshot_all(session: Session) -> dict[str, tuple]:
    out = {}
    for agent in session.tree:
        r = await session.replayer(agent.id)
        out[agent.id] = (r.messages(), r.valid_marks())
    return out


async def _session_scenario(data, check_undo: bool) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "ikigai.db")
        store = await Store.open(path)
        session = await Session.open(store, Providers(), SessionSettings())
        try:
            agents = [session.tree.root.id]
            for _ in range(data.draw(st.integers(1, 14), label="steps")):
                aid = data.draw(st.sampled_from(agents), label="agent")
                r = await session.replayer(aid)
                ops = ["say", "mark", "clear", "fork", "bad"]
                if r.valid_marks():
                    ops += ["rewind", "clear_mark"]
                if r.ctx:
                    ops += ["forget", "remember", "compact"]
                if r.undo_target() is not None:
                    ops.append("undo")
                gone = _restorable(r)
                if gone:
                    ops.append("restore")
                op = data.draw(st.sampled_from(ops), label="op")
                event(f"session op {op}")
                before = (r.messages(), r.valid_marks())
                is_context_op = op in ("clear", "rewind", "clear_mark", "forget", "remember",
                                       "compact", "restore")
                if op == "say":
                    task = await session.say(aid, data.draw(st.sampled_from(SAY_TEXTS)))
                    await task
                    await session.wait_idle()
                elif op == "mark":
                    name = data.draw(st.sampled_from(MARK_NAMES), label="name")
                    await session.command(aid, "/mark" + (f" {name}" if name else ""))
                elif op == "clear":
                    await session.command(aid, "/clear")
                elif op in ("rewind", "clear_mark"):
                    mark = data.draw(st.sampled_from(r.valid_marks()), label="mark")
                    verb = "/rewind" if op == "rewind" else "/clear"
                    if op == "rewind" and data.draw(st.booleans(), label="default mark"):
                        await session.command(aid, "/rewind")
                    else:
                        await session.command(aid, f"{verb} {mark.label}")
                elif op in ("forget", "remember"):
                    ids = data.draw(st.lists(st.sampled_from(list(r.ctx)), min_size=1,
                                             unique=True), label="ids")
                    await session.command(aid, f"/{op} --ids {','.join(map(str, ids))}")
                elif op == "compact":
                    # No /compact command yet: write the event it would write.
                    ids = data.draw(st.lists(st.sampled_from(list(r.ctx)), min_size=1,
                                             unique=True), label="ids")
                    batch = WriteBatch()
                    batch.add(aid, "compact", {"ids": ids, "summary": "summary"})
                    await session.commit(batch)
                elif op == "restore":
                    ids = data.draw(st.lists(st.sampled_from(gone), min_size=1, unique=True),
                                    label="restore ids")
                    await session.command(aid, f"/restore {','.join(map(str, ids))}")
                elif op == "undo":
                    await session.command(aid, "/undo")
                elif op == "fork":
                    marks = r.valid_marks()
                    args = []
                    if marks and data.draw(st.booleans(), label="fork from mark"):
                        args.append(data.draw(st.sampled_from(marks), label="fmark").label)
                    if data.draw(st.booleans(), label="prompt"):
                        args.append("do the child task")
                    out = await session.command(aid, " ".join(["/fork", *args]))
                    agents.append(out.data)
                    await session.wait_idle()
                elif op == "bad":
                    count = await session.store.count_events()
                    try:
                        await session.command(aid, "/clear NOPE")
                    except CommandError as exc:
                        assert "'NOPE'" in str(exc)
                    else:
                        raise AssertionError("/clear NOPE succeeded")
                    assert await session.store.count_events() == count
                if check_undo and is_context_op:
                    await session.command(aid, "/undo")
                    after = await session.replayer(aid)
                    assert (after.messages(), after.valid_marks()) == before, op
            live = await _snapshot_all(session)
        finally:
            await session.close()
            await store.close()

        store = await Store.open(path)
        try:
            fresh = await Session.open(store, Providers(), SessionSettings())
            reopened = await _snapshot_all(fresh)
            await fresh.close()
        finally:
            await store.close()
        assert set(reopened) == set(live)
        for aid in live:
            assert reopened[aid] == live[aid], f"agent {aid[:6]} differs after reopening"


SESSION = settings(max_examples=40, deadline=None,
                   suppress_health_check=[HealthCheck.function_scoped_fixture,
                                          HealthCheck.too_slow])


@SESSION
@given(data=st.data())
def test_reopened_session_computes_the_same_contexts(data):
    asyncio.run(_session_scenario(data, check_undo=False))


@SESSION
@given(data=st.data())
def test_session_undo_right_after_a_context_command_restores_it(data):
    asyncio.run(_session_scenario(data, check_undo=True))
