"""Summaries of pruned turns (issue 15 item 3) through real litellm against the loopback
fake: the summary is sent within its reserve and the window fits the budget minus it;
updates are incremental; off by default; a failing summariser never fails the turn and
stops after 3 failures; the summary stands only for what the context still holds (after
/clear, /forget, /undo, /compact) and a child inherits what its parent sends."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from ikigai_tui.core.commands import CommandError
from ikigai_tui.core.compaction import CompactionNotice, CompactionSettings
from ikigai_tui.core.compaction.pruned import CUT_NOTE, HEADING, KIND
from ikigai_tui.core.compaction.proposal import CompactVerdict
from ikigai_tui.cli_output import context_data
from tests.fakes.server import Fault, Reply

pytestmark = pytest.mark.parametrize("fmt", ["openai"], indirect=True)
BUDGET = 4_000
WORDS = "plan " * 240  # ~240 tokens a message
MARKER = "so your summary will stand in for them"


def is_pruned_request(received) -> bool:
    return MARKER in json.dumps(received.body)


class Provider:
    """Turns get a short reply; summary requests a numbered summary (or a Fault)."""

    def __init__(self, fault: Fault | None = None, text: str | None = None):
        self.fault = fault
        self.text = text
        self.requests: list = []  # the summary requests received
        self.turns: list = []

    def __call__(self, received):
        usage = (len(json.dumps(received.body)) // 4, 5)
        if is_pruned_request(received):
            self.requests.append(received)
            if self.fault is not None:
                return self.fault
            text = self.text or f"## Goal\nsummary number {len(self.requests)}"
            return Reply(text=text, usage=usage, chunk_size=4_000)
        if "You summarise a conversation" in json.dumps(received.body):  # a /compact
            return Reply(text="## Goal\ncompacted", usage=usage)
        self.turns.append(received)
        return Reply(text="ok", usage=usage)


def body_text(received) -> str:
    return json.dumps(received.body)


async def harness(make, path=None, **compaction):
    compaction.setdefault("summarize_pruned", True)
    return await make(path=path, settings_of_session={
        "budget": BUDGET, "compaction": CompactionSettings(**compaction)})


def notes(h, kind: str | None = None) -> list[str]:
    return [n.text for n in h.of(CompactionNotice) if kind is None or n.kind == kind]


async def turns(h, n: int, start: int = 0) -> None:
    for i in range(start, start + n):
        assert await h.say(f"step {i}: {WORDS}")


def sent_ids(received) -> list[int]:
    """The ids of the items a summary request holds ([#ID KIND] labels)."""
    text = "\n".join(m["content"] for m in received.body["messages"] if m["role"] == "user")
    return [int(i) for i in re.findall(r"\[#(\d+) \w+\]", text)]


def system_of(received) -> str:
    return "\n".join(m["content"] for m in received.body["messages"] if m["role"] == "system")


async def pruned_ids(h, agent_id=None) -> list[int]:
    plan = await h.session.plan(agent_id or h.root)
    meter = h.session.meter(h.session.tree[agent_id or h.root])
    return meter.ids[: plan.window.start_index]


async def test_the_summary_is_sent_within_its_reserve_and_the_window_fits_the_rest(make, fake, fmt):
    h = await harness(make)
    provider = Provider()
    fake.respond(provider)
    await turns(h, 12)
    events = await h.events(kind=KIND)
    assert len(events) >= 3 and len(provider.requests) == len(events)
    plan = await h.session.plan(h.root, messages=True)
    w = plan.window
    assert w.reserve == BUDGET // 10 and plan.pruned is not None
    assert plan.pruned.summary.event_id == events[-1].id
    assert 0 < w.pruned_summary <= w.reserve
    # The window's messages fit the budget minus the reserve; the whole within the budget.
    assert w.system + w.tools + w.summaries + w.window <= BUDGET - w.reserve
    parts = w.system + w.tools + w.summaries + w.window + w.pruned_summary
    assert abs(w.tokens - parts) <= 5 and w.tokens <= BUDGET  # (each part rounded up)
    assert w.pruned_covered == events[-1].payload["messages"] == w.start_index
    # The next turn's request carries it at the end of the system text, labelled.
    assert await h.say("one more")
    last = provider.turns[-1]
    system = system_of(last)
    assert HEADING in system and f"summary number {len(events)}" in system
    assert system.index("You are") < system.index(HEADING)
    # The side request's max_tokens come from the reserve.
    limit = provider.requests[-1].body.get("max_tokens") or provider.requests[-1].body.get(
        "max_completion_tokens")
    assert limit is not None and limit <= w.reserve
    # The covered ranges are exactly the first messages of the context, all pruned.
    payload = events[-1].payload
    assert payload["ranges"][0][0] == (await h.context())[0][0]
    assert payload["tokens"] <= w.reserve and payload["new"] >= 1
    notes_done = notes(h, "done")
    assert notes_done and re.fullmatch(r"Summarised \d+ pruned messages \(\d+ tokens\)", notes_done[-1])


async def test_a_summary_over_its_reserve_is_cut_to_fit(make, fake, fmt):
    h = await harness(make)
    provider = Provider(text="## Goal\n" + " ".join(f"detail{i}" for i in range(3_000)))
    fake.respond(provider)
    await turns(h, 10)
    events = await h.events(kind=KIND)
    assert events
    for event in events:
        assert event.payload["tokens"] <= BUDGET // 10
        assert event.payload["summary"].endswith(CUT_NOTE)
    plan = await h.session.plan(h.root)
    assert plan.pruned is not None and plan.window.pruned_summary <= plan.window.reserve


async def test_updates_are_incremental(make, fake, fmt):
    h = await harness(make)
    provider = Provider()
    fake.respond(provider)
    await turns(h, 12)
    events = await h.events(kind=KIND)
    assert len(events) >= 3
    first, second = events[0], events[1]
    # The first request holds the pruned messages and nothing else.
    covered_first = first.payload["messages"]
    context_ids = [k for k, kind, _ in await h.context()]
    assert sent_ids(provider.requests[0]) == context_ids[:covered_first]
    # The second: the previous summary, then only the messages pruned since.
    covered_second = second.payload["messages"]
    assert second.payload["previous"] == first.id
    assert sent_ids(provider.requests[1]) == [first.id, *context_ids[covered_first:covered_second]]
    assert second.payload["new"] == covered_second - covered_first
    assert "summary number 1" in json.dumps(provider.requests[1].body)
    assert "step 0:" not in json.dumps(provider.requests[1].body)


async def test_off_by_default_no_side_request_no_event(make, fake, fmt):
    h = await make(settings_of_session={"budget": BUDGET})
    provider = Provider()
    fake.respond(provider)
    await turns(h, 12)
    assert provider.requests == [] and await h.events(kind=KIND) == []
    plan = await h.session.plan(h.root)
    assert plan.window.reserve == 0 and plan.pruned is None and plan.window.start_index > 0
    assert all(HEADING not in system_of(r) for r in provider.turns)
    data = await context_data(h.session, h.session.tree[h.root])
    assert data["summary_reserve"] == 0 and data["pruned_summary"] is None


async def test_a_failing_summariser_never_fails_the_turn_and_stops_after_three(make, fake, fmt):
    h = await harness(make)
    provider = Provider(fault=Fault.http(400, {"error": {"message": "no summaries today"}}))
    fake.respond(provider)
    n = 0
    while not provider.requests:
        assert await h.say(f"step {n}: {WORDS}")  # the turns themselves succeed
        n += 1
    context = await h.context()
    await turns(h, 6, start=n)
    assert len(provider.requests) == 3  # tried after each turn, then stopped
    errors = notes(h, "error")
    assert len(errors) == 3 and "(1 of 3)" in errors[0] and "tried again after the next turn" in errors[0]
    assert "(3 of 3)" in errors[2] and "stopped after 3 failures" in errors[2]
    assert await h.events(kind=KIND) == []
    now = await h.context()
    assert [k for k, _, _ in now][: len(context)] == [k for k, _, _ in context]  # intact
    assert len(now) == len(context) + 12
    # The user acts (a context command): it tries again.
    provider.fault = None
    await h.session.command(h.root, "/forget --ids " + str(now[-1][0]))
    await turns(h, 1, start=n + 6)
    assert len(provider.requests) == 4 and len(await h.events(kind=KIND)) == 1


async def test_clear_drops_the_summary_and_the_next_one_covers_only_new_turns(make, fake, fmt):
    h = await harness(make)
    provider = Provider()
    fake.respond(provider)
    await turns(h, 10)
    assert (await h.session.plan(h.root)).pruned is not None
    await h.session.command(h.root, "/clear")
    assert (await h.session.plan(h.root)).pruned is None
    before = len(provider.turns)
    await turns(h, 10, start=10)
    assert all(HEADING not in system_of(r) for r in provider.turns[before: before + 3])
    cleared_at = (await h.events(kind="clear"))[-1].id
    after = [e for e in await h.events(kind=KIND) if e.id > cleared_at]
    assert after and after[0].payload["previous"] is None
    assert all(e.payload["ranges"][0][0] > cleared_at for e in after)
    plan = await h.session.plan(h.root)
    assert plan.pruned is not None and plan.pruned.summary.event_id == after[-1].id


async def test_forget_of_a_covered_message_and_its_undo_drop_the_summary(make, fake, fmt):
    h = await harness(make)
    provider = Provider()
    fake.respond(provider)
    await turns(h, 10)
    summary = (await h.session.plan(h.root)).pruned.summary
    covered = (await pruned_ids(h))[: summary.covered]
    await h.session.command(h.root, f"/forget --ids {covered[2]}")
    assert (await h.session.plan(h.root)).pruned is None  # it would describe a forgotten message
    await turns(h, 1, start=10)
    rebuilt = (await h.events(kind=KIND))[-1]
    assert rebuilt.payload["previous"] is None  # from scratch: the pruned messages as they are
    assert covered[2] not in sent_ids(provider.requests[-1])
    plan = await h.session.plan(h.root)
    assert plan.pruned is not None and plan.pruned.summary.event_id == rebuilt.id
    # /undo brings the forgotten message back among the covered ones: not described, dropped.
    await h.session.command(h.root, "/undo")
    assert covered[2] in [k for k, _, _ in await h.context()]
    assert (await h.session.plan(h.root)).pruned is None
    await turns(h, 1, start=11)
    again = (await h.events(kind=KIND))[-1]
    assert again.id != rebuilt.id and covered[2] in sent_ids(provider.requests[-1])


async def test_compact_drops_the_summary(make, fake, fmt):
    h = await harness(make)
    provider = Provider()
    fake.respond(provider)
    await turns(h, 10)
    assert (await h.session.plan(h.root)).pruned is not None

    async def accept(_proposal):
        return CompactVerdict(True)

    await h.session.command(h.root, "/compact --keep 1", review=accept)
    assert await h.events(kind="compact")
    assert (await h.session.plan(h.root)).pruned is None


async def test_a_window_that_shows_covered_messages_again_drops_the_summary(make, fake, fmt):
    h = await harness(make)
    provider = Provider()
    fake.respond(provider)
    await turns(h, 10)
    assert (await h.session.plan(h.root)).pruned is not None
    await h.session.command(h.root, "/mark here")
    await turns(h, 3, start=10)
    await h.session.command(h.root, "/rewind here")
    plan = await h.session.plan(h.root)
    # The rewind took 3 turns out: the window reaches back into the covered messages.
    assert plan.window.start_index < (await h.events(kind=KIND))[-1].payload["messages"]
    assert plan.pruned is None  # the newest summary covers messages the window shows


async def test_a_child_inherits_what_its_parent_sends(make, fake, fmt):
    h = await harness(make)
    provider = Provider()
    fake.respond(provider)
    await turns(h, 10)
    parent = await h.session.plan(h.root)
    assert parent.pruned is not None
    result = await h.session.command(h.root, "/fork --name kid")
    child = result.data
    plan = await h.session.plan(child)
    assert plan.pruned is not None and plan.pruned.summary.event_id == parent.pruned.summary.event_id
    assert plan.pruned.summary.agent_id == h.root
    before = len(provider.turns)
    assert await h.say("hello child", agent_id=child)
    assert HEADING in system_of(provider.turns[before])
    assert "summary number" in system_of(provider.turns[before])
    # Later summaries of the parent are not the child's; the child makes its own.
    await turns(h, 2, start=10)
    assert (await h.session.plan(child)).pruned.summary.event_id == parent.pruned.summary.event_id
    for n in range(3):
        assert await h.say(f"child step {n}: {WORDS}", agent_id=child)
    own = await h.events(agent_id=child, kind=KIND)
    assert own and own[0].payload["previous"] == parent.pruned.summary.event_id
    # A child forked from a mark after the covered messages inherits none of them.
    await h.session.command(h.root, "/mark brief")
    await turns(h, 1, start=30)
    late = (await h.session.command(h.root, "/fork brief")).data
    assert (await h.session.plan(late)).pruned is None


async def test_offline_summariser_makes_an_extractive_summary_labelled(make, fake, fmt):
    h = await harness(make, model="offline")
    provider = Provider()
    fake.respond(provider)
    await turns(h, 10)
    assert provider.requests == []
    events = await h.events(kind=KIND)
    assert events and events[-1].payload["extractive"] is True
    text = events[-1].payload["summary"]
    assert text.startswith("Extractive summary (the offline model cannot summarise")
    assert "step 0:" in text
    assert "extractive, offline model" in notes(h, "done")[-1]


async def test_context_and_context_json_show_the_summary_and_the_reserve(make, fake, fmt):
    h = await harness(make)
    provider = Provider()
    fake.respond(provider)
    await turns(h, 10)
    result = await h.session.command(h.root, "/context")
    text = "\n".join(result.lines)
    plan = await h.session.plan(h.root)
    w = plan.window
    assert re.search(rf"pruned summary +{w.pruned_summary:,}  \({w.pruned_covered} pruned messages "
                     rf"summarised; reserve {w.reserve:,}\)", text), text
    assert "    | ## Goal" in text
    data = await context_data(h.session, h.session.tree[h.root])
    assert data["summary_reserve"] == w.reserve
    pruned = data["pruned_summary"]
    assert pruned["tokens"] == w.pruned_summary and pruned["messages"] == w.pruned_covered
    assert pruned["text"].startswith("## Goal") and pruned["event"] == plan.pruned.summary.event_id
    assert data["breakdown"]["pruned_summary"] == w.pruned_summary
    assert data["tokens"] == w.tokens


async def test_many_pruned_turns_at_once_are_summarised_in_pieces_then_merged(make, fake, fmt):
    h = await make(settings_of_session={"budget": BUDGET})  # off while the turns pile up
    provider = Provider()
    fake.respond(provider)
    await turns(h, 10)
    assert provider.requests == []
    h.session.settings = h.session.settings._replace(
        compaction=CompactionSettings(summarize_pruned=True, piece_tokens=700))
    await turns(h, 1, start=10)
    pruned = await pruned_ids(h)
    event = (await h.events(kind=KIND))[-1]
    assert event.payload["messages"] == len(pruned) and event.payload["previous"] is None
    pieces = [r for r in provider.requests if "=== Part 1 ===" not in body_text(r)]
    merges = [r for r in provider.requests if "=== Part 1 ===" in body_text(r)]
    assert len(pieces) >= 2 and merges  # pieces that fit 700 tokens each, then a merge
    assert sorted(i for r in pieces for i in sent_ids(r)) == pruned  # each message once
    assert all(len(body_text(r)) // 4 < 700 + 1_500 for r in pieces)


async def test_recall_says_a_pruned_message_is_summarised(make, fake, fmt):
    h = await harness(make)
    provider = Provider()
    fake.respond(provider)
    await turns(h, 10)
    plan = await h.session.plan(h.root)
    pruned = await pruned_ids(h)
    covered = pruned[: plan.pruned.summary.covered]
    result = await h.session.command(h.root, "/recall step")
    states = {hit["id"]: hit["state"] for hit in result.data}
    assert states[covered[0]] == "pruned by the window (summarised, not sent verbatim)"
    last = (await h.context())[-2][0]  # the latest user message: in the window
    assert states[last] == "in the context"


async def test_the_replay_keeps_no_summary_text_and_a_reopened_session_sends_it(make, fake, fmt, tmp_path):
    path = tmp_path / "p.db"
    h = await harness(make, path=path)
    provider = Provider()
    fake.respond(provider)
    await turns(h, 10)
    before = (await h.session.plan(h.root, messages=True)).request().system
    r = await h.session.replayer(h.root)
    rows = [row for row in r.history if row[1] == KIND]
    assert rows and all("summary" not in row[2] for row in rows)  # text stays in the log
    assert HEADING in before
    await h.session.close()
    await h.store.close()
    h.closed = True
    again = await harness(make, path=path)
    plan = await again.session.plan(again.root, messages=True)
    assert plan.request().system == before
    rows = [row for row in (await again.session.replayer(again.root)).history if row[1] == KIND]
    assert rows and all("summary" not in row[2] for row in rows)


async def test_a_compaction_is_refused_while_a_summary_is_being_made(make, fake, fmt):
    h = await harness(make)
    provider = Provider()
    fake.respond(provider)
    n = 0
    while not provider.requests:  # until the window prunes and a first summary is made
        assert await h.say(f"step {n}: {WORDS}")
        n += 1
    made = len(provider.requests)
    slow = Provider()
    slow.requests = provider.requests

    def respond(received):
        reply = slow(received)
        if is_pruned_request(received):
            return Reply(text="## Goal\nslow summary", chunk_size=2, chunk_delay=0.05)
        return reply

    fake.respond(respond)
    task = await h.session.say(h.root, f"step {n}: {WORDS}")
    while len(provider.requests) == made:
        await asyncio.sleep(0.01)
    with pytest.raises(CommandError, match="pruned turns is being made"):
        await h.session.command(h.root, "/compact --keep 1")
    assert await asyncio.wait_for(task, 20)
    assert (await h.events(kind=KIND))[-1].payload["summary"] == "## Goal\nslow summary"
    assert await h.events(kind="compact") == []


async def test_a_summary_made_while_the_context_changed_is_not_recorded(make, fake, fmt):
    h = await harness(make)
    provider = Provider()
    fake.respond(provider)
    n = 0
    while not provider.requests:
        assert await h.say(f"step {n}: {WORDS}")
        n += 1
    made, events = len(provider.requests), len(await h.events(kind=KIND))

    def respond(received):
        if is_pruned_request(received):
            provider.requests.append(received)
            return Reply(text="## Goal\nstale", chunk_size=2, chunk_delay=0.05, usage=(50, 5))
        return Reply(text="ok", usage=(len(json.dumps(received.body)) // 4, 5))

    fake.respond(respond)
    task = await h.session.say(h.root, f"step {n}: {WORDS}")
    while len(provider.requests) == made:
        await asyncio.sleep(0.01)
    first = (await h.context())[0][0]
    await h.session.command(h.root, f"/forget --ids {first}")  # while it is being made
    assert await asyncio.wait_for(task, 20)
    assert len(await h.events(kind=KIND)) == events  # stale: not recorded
    spent = [e.payload for e in await h.events(kind="usage")
             if e.payload.get("purpose") == "pruned_summary"]
    assert len(spent) == events + 1  # what the request cost is kept all the same
    assert not [t for t in notes(h, "error")]
