"""Summaries of pruned turns (issue 15 item 3) through real litellm against the loopback
fake: the summary is sent within its reserve and the window fits the budget minus it;
updates are incremental; off by default; a failing summariser never fails the turn and
stops after 3 failures; the offline extract; /context, pieces, /recall, a reopened log.
What stands when the context changes is in test_pruned_validity.py."""

from __future__ import annotations

import json
import re

import pytest

from ikigai_tui.core.compaction import CompactionSettings
from ikigai_tui.core.compaction.pruned import CUT_NOTE, HEADING, KIND
from ikigai_tui.cli.output import context_data
from tests.fakes.server import Fault
from tests.integration.pruned_helpers import (
    BUDGET, WORDS, Provider, body_text, harness, notes, pruned_ids, sent_ids, system_of,
    turns,
)

pytestmark = pytest.mark.parametrize("fmt", ["openai"], indirect=True)
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
    assert w.tokens == parts and w.tokens <= BUDGET  # the rows add up to the whole
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
