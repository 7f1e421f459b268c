"""The sliding window and the gauge (SPEC §7).

Pure tests run the ContextMeter over Replayer rows against an independent oracle; the
session tests run it through the real Session (offline model, SQLite), `/context` and
`context --json`.
"""

from __future__ import annotations

import json
import math
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ikigai_tui.cli_output import context_data
from ikigai_tui.core.commands import CommandError
from ikigai_tui.core.events import WriteBatch
from ikigai_tui.core.provider import Limits
from ikigai_tui.core.replay import Replayer
from ikigai_tui.core.request import build_messages, system_text
from ikigai_tui.core.session import DEFAULT_BUDGET, Session, SessionSettings
from ikigai_tui.core.store import Store
from ikigai_tui.core.tokens import TokenCounter
from ikigai_tui.core.tools import tool_schemas
from ikigai_tui.core.window import CONTEXT_FULL, ContextMeter, Window
from ikigai_tui.llm.providers import Providers
from tests.fakes.server import validate_pairs

MODEL = "anthropic/x"
LIMIT = 200_000
PURE = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def fresh_meter() -> ContextMeter:
    return ContextMeter(TokenCounter(MODEL))


# -- an independent oracle -------------------------------------------------------------------


def oracle(r: Replayer, tools: list, budget: int) -> tuple[list[int], int]:
    """(the context's messages in order, the index where the window must start): the
    first turn boundary from which the request fits, else the latest turn."""
    counter = TokenCounter(MODEL)
    ids = [k for k, e in r.ctx.items() if e[1] != "summary"]
    sizes = [counter.message(r.ctx[k][1], r.ctx[k][2]) for k in ids]
    summaries = sum(counter.message(e[1], e[2]) for e in r.ctx.values() if e[1] == "summary")
    fixed = counter.fixed(system_text(r), tools) + summaries
    boundaries = [0] + [i for i, k in enumerate(ids) if r.ctx[k][1] == "user" and i > 0]
    if budget <= 0 or not ids:
        return ids, 0
    for start in boundaries:
        if fixed + sum(sizes[start:]) <= budget:
            return ids, start
    return ids, boundaries[-1]


def check_pairs(r: Replayer, window: list[int]) -> None:
    inside = set(window)
    for k in window:
        kind, payload = r.ctx[k][1], r.ctx[k][2]
        if kind == "tool_call" and r.result_of.get(k) in r.ctx:
            assert r.result_of[k] in inside, f"call {k} in the window, its result not"
        if kind == "tool_result" and payload["call_event"] in r.ctx:
            assert payload["call_event"] in inside, f"result {k} in the window, its call not"


# -- generating conversations -------------------------------------------------------------


class Log:
    """Rows applied to a live Replayer as they are drawn."""

    def __init__(self) -> None:
        self.rows: list[tuple[int, str, dict]] = []
        self.r = Replayer()
        self.next_id = 1
        self.calls = 0

    def emit(self, kind: str, payload: dict) -> int:
        row = (self.next_id, kind, payload)
        self.next_id += 1
        self.rows.append(row)
        self.r.apply(row)
        return row[0]

    def text(self, draw) -> str:
        return "t" * draw(st.sampled_from([0, 3, 40, 200, 800, 3000]))

    def pair(self, draw) -> None:
        self.calls += 1
        cid = f"call_{self.calls}"
        call = self.emit("tool_call", {"call_id": cid, "name": "slash",
                                       "arguments": json.dumps({"command": "marks", "x": self.text(draw)})})
        self.emit("tool_result", {"call_id": cid, "call_event": call, "content": self.text(draw)})

    def turn(self, draw) -> None:
        self.emit("user", {"content": self.text(draw) or "hi"})
        for step in draw(st.lists(st.sampled_from(["assistant", "pair", "pairs"]), max_size=4)):
            if step == "assistant":
                self.emit("assistant", {"content": self.text(draw)})
            elif step == "pair":
                self.pair(draw)
            else:  # several calls in one round, then their results
                self.calls += 2
                a = self.emit("tool_call", {"call_id": f"call_{self.calls - 1}", "name": "slash",
                                            "arguments": "{}"})
                b = self.emit("tool_call", {"call_id": f"call_{self.calls}", "name": "slash",
                                            "arguments": "{}"})
                self.emit("tool_result", {"call_id": f"call_{self.calls - 1}", "call_event": a,
                                          "content": self.text(draw)})
                self.emit("tool_result", {"call_id": f"call_{self.calls}", "call_event": b,
                                          "content": self.text(draw)})


@st.composite
def conversations(draw) -> Log:
    log = Log()
    if draw(st.booleans()):
        log.emit("system", {"content": "s" * draw(st.integers(1, 2000))})
    for _ in range(draw(st.integers(0, 2))):
        log.emit("pin", {"text": "p" * draw(st.integers(1, 400))})
    for _ in range(draw(st.integers(0, 2))):  # a leading turn 0: no user message first
        if draw(st.booleans()):
            log.emit("assistant", {"content": log.text(draw)})
        else:
            log.pair(draw)
    for _ in range(draw(st.integers(0, 10))):
        log.turn(draw)
    return log


# -- pure properties ------------------------------------------------------------------------


@PURE
@given(log=conversations(), data=st.data())
def test_pruning_drops_whole_turns_only(log, data):
    r = log.r
    tools = data.draw(st.sampled_from([[], tool_schemas()]), label="tools")
    counter = TokenCounter(MODEL)
    total = counter.fixed(system_text(r), tools) + sum(
        counter.message(e[1], e[2]) for e in r.ctx.values())
    budget = data.draw(st.integers(0, math.ceil(total) + 200), label="budget")
    meter = fresh_meter()
    w = meter.measure(r, tools, budget, LIMIT)
    window = meter.window_ids()

    ids, start = oracle(r, tools, budget)
    assert meter.ids == ids
    assert w.start_index == start
    assert window == ids[start:]
    assert w.start == (ids[start] if ids else None)
    # The window starts a turn (or is the whole context) ...
    assert start == 0 or r.ctx[ids[start]][1] == "user"
    # ... and never splits a tool exchange.
    check_pairs(r, window)
    assert validate_pairs({"messages": build_messages(r, window)}, "openai") == []
    # It fits, unless only the latest turn is left.
    users = [i for i, k in enumerate(ids) if r.ctx[k][1] == "user"]
    if budget > 0 and w.tokens > budget:
        assert users == [] or start == users[-1]
    if budget > 0 and start > 0:  # one turn more would not have fitted
        assert w.tokens + w.outside > budget
    window_raw = sum(counter.message(r.ctx[k][1], r.ctx[k][2]) for k in window)
    assert w.tokens == math.ceil(counter.fixed(system_text(r), tools) + window_raw - 1e-9)
    assert w.window == math.ceil(window_raw - 1e-9)
    boundaries = [0] + [i for i in users if i > 0]
    assert w.pruned_turns == len([b for b in boundaries if b < start])


def _turns(sizes: list[int]) -> Replayer:
    rows, n = [], 1
    for size in sizes:
        rows.append((n, "user", {"content": "u" * size}))
        rows.append((n + 1, "tool_call", {"call_id": f"c{n}", "name": "slash", "arguments": "{}"}))
        rows.append((n + 2, "tool_result", {"call_id": f"c{n}", "call_event": n + 1,
                                            "content": "r" * size}))
        rows.append((n + 3, "assistant", {"content": "a" * size}))
        n += 4
    return Replayer.from_rows(rows)


def test_latest_turn_survives_alone_even_over_budget():
    r = _turns([400, 400, 400, 40_000])
    meter = fresh_meter()
    w = meter.measure(r, tool_schemas(), 500, LIMIT)
    assert meter.window_ids() == [13, 14, 15, 16]
    assert w.start == 13 and w.start_index == 12 and w.pruned_turns == 3
    assert w.tokens > 500 * 50
    assert w.tokens > w.budget
    # Even a budget of 1 keeps it.
    w1 = fresh_meter().measure(r, tool_schemas(), 1, LIMIT)
    assert w1.start == 13 and w1.window == w.window


def test_window_fits_after_pruning():
    r = _turns([400] * 10)  # each turn ~ 4 * (3 + 100) tokens
    meter = fresh_meter()
    w = meter.measure(r, [], 1_000, LIMIT)
    assert w.tokens <= 1_000
    previous_turn = meter.sizes[w.start_index - 4:w.start_index]
    assert w.tokens + sum(previous_turn) > 1_000  # not one turn more than needed was dropped
    assert 0 < w.pruned_turns < 10
    assert r.ctx[w.start][1] == "user"
    assert w.outside + w.window == math.ceil(meter.total)


def test_budget_zero_keeps_everything():
    r = _turns([4_000] * 30)
    meter = fresh_meter()
    small = meter.measure(r, tool_schemas(), 2_000, LIMIT)
    assert small.pruned_turns == 29
    w = meter.measure(r, tool_schemas(), 0, LIMIT)  # then switched off: everything is back
    assert meter.window_ids() == list(r.ctx)
    assert (w.start, w.start_index, w.outside, w.pruned_turns, w.budget) == (1, 0, 0, 0, 0)
    assert w.tokens > 60_000
    assert w == fresh_meter().measure(r, tool_schemas(), 0, LIMIT)


def test_a_larger_budget_lets_the_window_grow_back():
    r = _turns([400] * 10)
    meter = fresh_meter()
    narrow = meter.measure(r, [], 1_000, LIMIT)
    wide = meter.measure(r, [], 3_000, LIMIT)
    assert wide.start_index < narrow.start_index
    assert wide == fresh_meter().measure(r, [], 3_000, LIMIT)


def test_empty_context():
    w = fresh_meter().measure(Replayer(), tool_schemas(), 100, LIMIT)
    assert (w.start, w.start_index, w.window, w.outside, w.pruned_turns) == (None, 0, 0, 0, 0)
    assert w.tokens == w.system + w.tools or abs(w.tokens - w.system - w.tools) <= 1


# -- incremental == from scratch -------------------------------------------------------------


@PURE
@given(data=st.data())
def test_incremental_window_equals_from_scratch(data):
    log = Log()
    draw = data.draw
    tools = draw(st.sampled_from([[], tool_schemas()]), label="tools")
    meter = fresh_meter()
    budget = draw(st.sampled_from([0, 300, 800, 1500, 4000]), label="budget")
    steps = draw(st.integers(1, 40), label="steps")
    for _ in range(steps):
        ops = ["turn", "turn", "user", "assistant", "pair", "mark", "clear", "budget"]
        if log.r.valid_marks():
            ops.append("rewind")
        if log.r.ctx:
            ops += ["forget", "remember", "compact"]
        if log.r.undo_target() is not None:
            ops += ["undo", "undo"]
        op = draw(st.sampled_from(ops), label="op")
        if op == "turn":
            log.turn(draw)
        elif op == "user":
            log.emit("user", {"content": log.text(draw) or "q"})
        elif op == "assistant":
            log.emit("assistant", {"content": log.text(draw)})
        elif op == "pair":
            log.pair(draw)
        elif op == "mark":
            log.emit("mark", {"name": draw(st.sampled_from(["A", "B", None]), label="name")})
        elif op == "clear":
            log.emit("clear", {})
        elif op == "rewind":
            mark = draw(st.sampled_from(log.r.valid_marks()), label="mark")
            log.emit("rewind", {"mark": mark.name, "mark_event": mark.event_id})
        elif op in ("forget", "remember", "compact"):
            ids = draw(st.lists(st.sampled_from(list(log.r.ctx)), min_size=1, unique=True),
                       label="ids")
            if op == "compact":
                log.emit("compact", {"ids": ids, "summary": "S" * draw(st.integers(0, 600))})
            else:
                log.emit("filter", {"mode": op, "ids": ids})
        elif op == "undo":
            log.emit("undo", {"target": log.r.undo_target()})
        elif op == "budget":
            budget = draw(st.sampled_from([0, 300, 800, 1500, 4000]), label="budget")
        if draw(st.integers(0, 3), label="measure?") or op == "budget":
            incremental = meter.measure(log.r, tools, budget, LIMIT)
            scratch_meter = fresh_meter()
            assert incremental == scratch_meter.measure(log.r, tools, budget, LIMIT), op
            assert meter.window_ids() == scratch_meter.window_ids()
    final = meter.measure(log.r, tools, budget, LIMIT)
    replayed = Replayer.from_rows(list(log.rows))
    scratch = fresh_meter()
    assert final == scratch.measure(replayed, tools, budget, LIMIT)
    assert meter.window_ids() == scratch.window_ids()
    ids, start = oracle(log.r, tools, budget)
    assert meter.window_ids() == ids[start:]
    check_pairs(log.r, meter.window_ids())


@pytest.mark.parametrize("change", ["unpin", "shorter system prompt"])
def test_window_grows_back_when_the_fixed_part_shrinks(change):
    """The window start is a function of budget + context: after /unpin (or a shorter
    system prompt) the incremental meter must give what a fresh one (a restart) gives."""
    rows = [(i, "user" if i % 2 else "assistant", {"content": "x" * 400}) for i in range(1, 11)]
    r = Replayer.from_rows(rows)
    meter = fresh_meter()
    before = meter.measure(r, [], 600, LIMIT)
    if change == "unpin":
        r.apply((11, "pin", {"text": "p" * 1600}))
        meter.measure(r, [], 600, LIMIT)
        r.apply((12, "unpin", {"index": 1}))
    else:
        r.apply((11, "system", {"content": "s" * 1600}))
        meter.measure(r, [], 600, LIMIT)
        r.apply((12, "system", {"content": ""}))
    after = meter.measure(r, [], 600, LIMIT)
    assert after == fresh_meter().measure(r, [], 600, LIMIT)
    assert after.start == before.start


# -- the gauge -------------------------------------------------------------------------------


def _window(tokens: int, limit: int) -> Window:
    return Window(start=None, start_index=0, tokens=tokens, system=0, tools=0, pins=0,
                  summaries=0, window=0, outside=0, pruned_turns=0, budget=0, limit=limit,
                  exact=False)


@pytest.mark.parametrize(("tokens", "limit", "state"), [
    (0, 100, "normal"), (79, 100, "normal"), (80, 100, "warning"), (94, 100, "warning"),
    (95, 100, "critical"), (99, 100, "critical"), (100, 100, "full"), (150, 100, "full"),
    (159_999, 200_000, "normal"), (160_000, 200_000, "warning"),
    (189_999, 200_000, "warning"), (190_000, 200_000, "critical"),
    (199_999, 200_000, "critical"), (200_000, 200_000, "full"),
    (10, 0, "normal"),
])
def test_thresholds(tokens, limit, state):
    w = _window(tokens, limit)
    assert w.state == state
    assert w.percent == (100.0 * tokens / limit if limit else 0.0)


# -- through a session -----------------------------------------------------------------------


@pytest.fixture
async def sessions(db_path):
    """open(budget=...) -> a Session on db_path; close(session) ends it (all end at teardown)."""
    opened: dict[int, tuple[Session, Store]] = {}

    async def open_(budget: int = DEFAULT_BUDGET) -> Session:
        store = await Store.open(db_path)
        session = await Session.open(store, Providers(), SessionSettings(budget=budget))
        opened[id(session)] = (session, store)
        return session

    async def close(session: Session) -> None:
        session_, store = opened.pop(id(session))
        await session_.close()
        await store.close()

    open_.close = close
    yield open_
    for session, store in opened.values():
        await session.close()
        await store.close()


async def talk(session: Session, agent_id: str, text: str) -> None:
    task = await session.say(agent_id, text)
    assert await task


async def chat(session: Session, turns: int, size: int = 400, agent_id: str | None = None) -> None:
    agent_id = agent_id or session.tree.root.id
    for i in range(turns):
        await talk(session, agent_id, f"question {i}: " + "q" * size)


def _num(text: str) -> int:
    if text.endswith("K"):
        return round(float(text[:-1]) * 1000)
    return int(text.replace(",", ""))


_BREAKDOWN = [
    r"  system prompt +(?P<system>[\d,]+)(?:  \(of which (?P<npins>\d+) pins: (?P<pins>[\d,]+)\))?",
    r"  tools +(?P<tools>[\d,]+)",
    r"  summaries +(?P<summaries>[\d,]+)  \((?P<nsummaries>\d+)\)",
    r"  window +(?P<window>[\d,]+)  \((?P<nwindow>[\d,]+) messages\)",
    r"  outside window +(?P<outside>[\d,]+)  \((?P<noutside>[\d,]+) messages, (?P<pruned>-?[\d,]+) "
    r"pruned turns?; not sent\)",
    r"Budget: (?P<budget>[\d,]+|off \(sliding window disabled\)); window starts at "
    r"(?P<start>message \d+|empty)",
]


def parse_context(lines: list[str]) -> dict:
    assert len(lines) == 7, lines
    head = re.fullmatch(r"Context: (?P<tokens>[\d.,]+K?)/(?P<limit>[\d.,]+K?) tokens "
                        r"\((?P<percent>\d+)%\), (?P<state>normal|warning|critical|full); "
                        r"counts (?P<kind>estimated|exact) for (?P<model>\S+)", lines[0])
    assert head, lines[0]
    out = dict(head.groupdict())
    for pattern, line in zip(_BREAKDOWN, lines[1:]):
        found = re.fullmatch(pattern, line)
        assert found, (pattern, line)
        out.update({k: v for k, v in found.groupdict().items() if v is not None})
    return out


async def test_context_command_reports_the_window(sessions):
    session = await sessions(budget=1_500)
    root = session.tree.root.id
    await chat(session, 8)
    await session.command(root, "/pin always answer briefly")
    await talk(session, root, "after the pin")
    result = await session.command(root, "/context")
    w = result.data
    assert w == await session.measure(root)
    shown = parse_context(result.lines)

    r = await session.replayer(root)
    meter = session.meter(session.tree[root])
    window = meter.window_ids()
    outside = [k for k in r.ctx if k not in set(window)]
    assert outside and window, "the budget should have pruned some turns"

    assert _num(shown["tokens"]) == w.tokens and w.tokens < 10_000
    assert shown["limit"] == "200.0K" and w.limit == 200_000
    assert int(shown["percent"]) == round(100 * w.tokens / 200_000)
    assert shown["state"] == w.state == "normal"
    assert (shown["kind"], shown["model"]) == ("estimated", "offline")
    assert shown["npins"] == "1" and _num(shown["pins"]) == w.pins > 0
    assert _num(shown["system"]) == w.system > w.pins
    assert _num(shown["tools"]) == w.tools > 0
    assert (_num(shown["summaries"]), shown["nsummaries"]) == (0, "0")
    assert _num(shown["window"]) == w.window and _num(shown["nwindow"]) == len(window)
    assert _num(shown["outside"]) == w.outside > 0
    assert _num(shown["noutside"]) == len(outside)
    users_outside = [k for k in outside if r.ctx[k][1] == "user"]
    assert _num(shown["pruned"]) == w.pruned_turns == len(users_outside) > 0
    assert shown["budget"] == "1,500" and w.budget == 1_500
    assert shown["start"] == f"message {window[0]}" and r.ctx[window[0]][1] == "user"
    # The figures are the counter's own, scaled by the learned factor.
    counter = meter.counter
    window_raw = sum(counter.message(r.ctx[k][1], r.ctx[k][2]) for k in window)
    assert w.window == counter.scale(window_raw)
    assert w.tokens <= 1_500
    assert abs(w.system + w.tools + w.summaries + w.window - w.tokens) <= 3

    # A summary is outside the window and always counted.
    batch = WriteBatch()
    batch.add(root, "compact", {"ids": outside[:4], "summary": "we said hello " * 20})
    await session.commit(batch)
    after = parse_context((await session.command(root, "/context")).lines)
    assert after["nsummaries"] == "1" and _num(after["summaries"]) > 0

    # Exact counts for an OpenAI model.
    await session.command(root, "/model openai/gpt-4o")
    exact = await session.command(root, "/context")
    shown = parse_context(exact.lines)
    assert (shown["kind"], shown["model"]) == ("exact", "openai/gpt-4o")
    assert exact.data.exact and _num(shown["limit"]) == exact.data.limit
    gpt = TokenCounter("openai/gpt-4o")
    window = session.meter(session.tree[root]).window_ids()
    assert exact.data.window == sum(gpt.message(r.ctx[k][1], r.ctx[k][2]) for k in window)


async def test_context_command_with_the_window_off(sessions):
    session = await sessions(budget=0)
    root = session.tree.root.id
    await chat(session, 5, size=2_000)
    result = await session.command(root, "/context")
    shown = parse_context(result.lines)
    r = await session.replayer(root)
    assert shown["budget"] == "off (sliding window disabled)"
    assert shown["start"] == f"message {next(iter(r.ctx))}"
    assert (shown["outside"], shown["noutside"], shown["pruned"]) == ("0", "0", "0")
    assert _num(shown["nwindow"]) == len(r.ctx) == 10
    await session.command(root, "/clear")
    shown = parse_context((await session.command(root, "/context")).lines)
    assert shown["start"] == "empty" and shown["nwindow"] == "0"


async def test_no_turn_is_pruned_while_everything_fits(sessions):
    """The everyday case: a new conversation under the default budget prunes nothing,
    and says so (0 pruned turns, never a negative count)."""
    session = await sessions()
    root = session.tree.root
    shown = parse_context((await session.command(root.id, "/context")).lines)
    assert (shown["start"], shown["pruned"]) == ("empty", "0")
    await chat(session, 2)
    result = await session.command(root.id, "/context")
    shown = parse_context(result.lines)
    assert (shown["outside"], shown["noutside"]) == ("0", "0")
    assert shown["pruned"] == "0"
    assert result.data.pruned_turns == 0
    assert (await context_data(session, root))["pruned_turns"] == 0


async def test_context_json_matches_the_meter(sessions):
    session = await sessions(budget=1_200)
    root = session.tree.root
    await chat(session, 8)
    data = await context_data(session, root)
    json.dumps(data)  # serializable as `context --json` prints it
    w = await session.measure(root.id)
    meter = session.meter(root)
    window = meter.window_ids()
    assert data["tokens"] == w.tokens
    assert data["budget"] == w.budget == 1_200
    assert data["limit"] == 200_000 and data["estimated"] is True
    assert data["window_start"] == w.start == window[0]
    assert data["pruned_turns"] == w.pruned_turns > 0
    assert data["breakdown"]["outside"] == w.outside > 0
    flags = [m["in_window"] for m in data["messages"]]
    inside = [m["id"] for m in data["messages"] if m["in_window"]]
    assert inside == window
    assert flags == sorted(flags)  # a prefix outside, the rest inside
    assert data["messages"][flags.index(True)]["id"] == data["window_start"]
    assert data["messages"][flags.index(True)]["role"] == "user"
    users_outside = [m for m in data["messages"] if not m["in_window"] and m["role"] == "user"]
    assert len(users_outside) == data["pruned_turns"]
    assert data["tokens"] <= data["budget"]


async def test_budget_is_capped_to_the_input_limit(sessions, monkeypatch):
    session = await sessions(budget=10**9)
    root = session.tree.root.id
    assert (await session.measure(root)).budget == 200_000 - 8_192
    monkeypatch.setattr(session.providers, "limits",
                        lambda model: Limits(input=5_000, reserve=1_000, known=True))
    assert (await session.measure(root)).budget == 4_000


async def test_window_is_the_same_after_a_restart(sessions):
    session = await sessions(budget=1_500)
    root = session.tree.root
    await chat(session, 6)
    await session.command(root.id, "/mark A")
    await chat(session, 4, size=800)
    ids = [m[0] for m in (await session.replayer(root.id)).messages()]
    await session.command(root.id, f"/forget --ids {ids[-3]}")
    await chat(session, 2)
    await session.command(root.id, "/rewind A")
    await session.command(root.id, "/undo")
    before = await context_data(session, root)
    assert before["pruned_turns"] > 0
    await sessions.close(session)

    again = await sessions(budget=1_500)
    after = await context_data(again, again.tree.root)
    assert after["window_start"] == before["window_start"]
    assert [(m["id"], m["in_window"]) for m in after["messages"]] == \
        [(m["id"], m["in_window"]) for m in before["messages"]]
    assert after["tokens"] == before["tokens"]
    assert after["breakdown"] == before["breakdown"]


async def test_window_is_the_same_after_a_restart_following_unpin(sessions):
    session = await sessions(budget=1_500)
    root = session.tree.root
    await chat(session, 6)
    await session.command(root.id, "/pin " + "remember this " * 60)
    await talk(session, root.id, "one more")
    pinned = await session.measure(root.id)  # measured once the turn is over, as the TUI does
    assert pinned.pruned_turns > 0 and pinned.pins > 0
    await session.command(root.id, "/unpin 1")
    before = await context_data(session, root)
    await sessions.close(session)
    again = await sessions(budget=1_500)
    after = await context_data(again, again.tree.root)
    assert (after["window_start"], after["tokens"]) == (before["window_start"], before["tokens"])


async def test_child_inherits_the_budget_at_fork(sessions):
    session = await sessions(budget=5_000)
    root = session.tree.root
    await chat(session, 2)
    child_id = (await session.command(root.id, "/fork --name kid")).data
    child = session.tree[child_id]
    assert session.budget_of(child) == 5_000
    assert (await session.measure(child_id)).budget == 5_000
    await sessions.close(session)

    again = await sessions(budget=7_000)
    root, child = again.tree.root, again.tree[child_id]
    assert again.budget_of(child) == 5_000  # before its log is read ...
    assert (await context_data(again, child))["budget"] == 5_000  # ... and after
    assert again.budget_of(child) == 5_000
    assert (await context_data(again, root))["budget"] == 7_000
    # A grandchild forked now inherits its parent's budget, not the configured one.
    grandchild = (await again.command(child_id, "/fork")).data
    assert (await again.measure(grandchild)).budget == 5_000
    root_child = (await again.command(root.id, "/fork")).data
    assert (await again.measure(root_child)).budget == 7_000


async def test_context_full_blocks_sending_until_clear(sessions, monkeypatch):
    session = await sessions(budget=0)
    root = session.tree.root.id
    base = (await session.measure(root)).tokens
    limit = base + 400
    monkeypatch.setattr(session.providers, "limits",
                        lambda model: Limits(input=limit, reserve=0, known=True))
    for _ in range(20):
        if (await session.measure(root)).tokens >= limit:
            break
        await talk(session, root, "fill " * 30)
    w = await session.measure(root)
    assert w.tokens >= limit and w.state == "full" and w.budget == 0

    count = await session.store.count_events()
    with pytest.raises(CommandError) as raised:
        await session.say(root, "one more please")
    assert str(raised.value) == CONTEXT_FULL == "Context full. Use /clear to continue."
    assert await session.store.count_events() == count
    assert session.tree[root].task is None or session.tree[root].task.done()

    await session.command(root, "/clear")
    assert (await session.measure(root)).state != "full"
    await talk(session, root, "sending works again")
    r = await session.replayer(root)
    assert [e[1] for e in r.ctx.values()] == ["user", "assistant"]
