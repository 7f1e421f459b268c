"""/forget and /remember CRITERIA with the LLM matcher (issue 12): side requests through
real litellm against the loopback fake, answered through the required report_matches tool."""

from __future__ import annotations

import asyncio
import json

import pytest

from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.matching import exchanges
from ikigai_tui.core.notices import MatchingNotice
from ikigai_tui.core.commands.proposals import REFUSE, FilterProposal, Verdict
from tests.fakes.server import Fault, Reply
from tests.integration.matcher_helpers import Responder, report, shown_ids, write_exchanges

# How each wire format says "call report_matches, and only it".
FORCED = {
    "openai": lambda b: b["tool_choice"] == {"type": "function", "function": {"name": "report_matches"}},
    "anthropic": lambda b: b["tool_choice"] == {"type": "tool", "name": "report_matches"},
    "gemini": lambda b: (b["toolConfig"]["functionCallingConfig"]["mode"] == "ANY" and
                         b["toolConfig"]["functionCallingConfig"]["allowed_function_names"]
                         == ["report_matches"]),
}
openai_only = pytest.mark.parametrize("fmt", ["openai"], indirect=True)


class Reviews:
    """A reviewer that records each proposal and answers with `verdict`."""

    def __init__(self, verdict=None):
        self.proposals: list[FilterProposal] = []
        self.verdict = verdict

    async def __call__(self, proposal):
        self.proposals.append(proposal)
        return self.verdict(proposal) if callable(self.verdict) else (self.verdict or Verdict(True))


async def context_ids(h) -> list[int]:
    return [i for i, _kind, _payload in await h.context()]


async def test_one_request_when_the_context_fits_and_one_filter_event(make, fake, fmt):
    h = await make()
    topic_of = await write_exchanges(h, ["weather", "schema", "music", "schema"])
    fake.respond(Responder(topic_of, "schema"))
    before = len(await h.events())
    reviews = Reviews()
    result = await h.session.command(h.root, "/forget the database schema talk", review=reviews)
    (received,) = fake.requests
    assert FORCED[fmt](received.body), received.body
    assert sorted(shown_ids(received)) == sorted(topic_of)  # the whole context, once
    assert "the database schema talk" in json.dumps(received.body)
    schema = sorted(i for i, t in topic_of.items() if t == "schema")
    (proposal,) = reviews.proposals
    assert proposal.matcher == f"{h.model} (LLM)" and proposal.criteria == "the database schema talk"
    assert {i.id: i.reason for i in proposal.items} == {i: "about schema" for i in schema}
    assert result.lines[0].startswith("Forgot 4 messages")
    new = (await h.events())[before:]
    assert [e.kind for e in new] == ["command", "usage", "filter"]
    sizes = {k: new[2].payload.pop(k) for k in ("before", "after")}
    assert new[2].payload == {"mode": "forget", "ids": schema, "criteria": "the database schema talk",
                              "matcher": f"{h.model} (LLM)",
                              "command": "/forget the database schema talk"}
    assert sizes["before"]["messages"] == len(topic_of)
    assert sizes["after"]["messages"] == len(topic_of) - len(schema)
    assert sizes["after"]["tokens"] < sizes["before"]["tokens"]
    assert new[1].payload["purpose"] == "match" and new[1].payload["input_tokens"] == 100
    assert sorted(await context_ids(h)) == sorted(i for i, t in topic_of.items() if t != "schema")


@openai_only
async def test_chunks_cover_every_message_once_never_split_an_exchange_and_respect_the_limit(
        make, fake, fmt):
    h = await make(settings_of_session={"matcher_chunk_tokens": 300, "matcher_concurrency": 2})
    topics = ["schema", "weather", "music"] * 12
    topic_of = await write_exchanges(h, topics, padding=200)
    responder = Responder(topic_of, "weather", delay=0.05)
    fake.respond(responder)
    flight = {"now": 0, "most": 0}
    complete = h.session.gateway.complete

    async def counting(*args, **kwargs):
        flight["now"] += 1
        flight["most"] = max(flight["most"], flight["now"])
        try:
            return await complete(*args, **kwargs)
        finally:
            flight["now"] -= 1

    h.session.gateway.complete = counting
    await h.session.command(h.root, "/forget anything about the weather")
    seen = responder.seen
    assert len(seen) > 3
    shown = [i for ids in seen for i in ids]
    assert sorted(shown) == sorted(topic_of)  # every message exactly once
    for ids in seen:  # whole exchanges: a question and its answer travel together
        assert all(topic_of.get(i) is not None for i in ids)
        assert len(ids) % 2 == 0 and all(ids[n + 1] == ids[n] + 1 for n in range(0, len(ids), 2))
    assert flight["most"] == 2
    progress = [(n.done, n.total) for n in h.of(MatchingNotice)]
    assert progress == [(d, len(seen)) for d in range(len(seen) + 1)]
    assert sorted(await context_ids(h)) == sorted(i for i, t in topic_of.items() if t != "weather")


@openai_only
async def test_remember_keeps_only_the_reviewed_matches_and_cancel_writes_only_the_record(make, fake, fmt):
    h = await make()
    topic_of = await write_exchanges(h, ["schema", "weather", "schema", "music"])
    fake.respond(Responder(topic_of, "schema"))
    before = len(await h.events())
    await h.session.command(h.root, "/remember schema", review=Reviews(REFUSE))
    assert [e.kind for e in (await h.events())[before:]] == ["command", "usage"]
    assert sorted(await context_ids(h)) == sorted(topic_of)
    schema = sorted(i for i, t in topic_of.items() if t == "schema")
    keep = schema[1:]  # the reviewer unticks the first match
    result = await h.session.command(h.root, "/remember schema",
                                     review=Reviews(lambda p: Verdict.accept(keep)))
    assert result.lines == [f"Kept 3 messages; forgot 5."]
    assert await context_ids(h) == keep


@openai_only
async def test_hallucinated_ids_are_dropped_and_counted_never_applied(make, fake, fmt):
    h = await make()
    topic_of = await write_exchanges(h, ["schema", "weather"])
    system_id = max(topic_of) + 1000
    fake.respond(Responder(topic_of, "schema", extra=(system_id, -3)))
    reviews = Reviews(REFUSE)
    await h.session.command(h.root, "/forget schema", review=reviews)
    (proposal,) = reviews.proposals
    assert proposal.dropped == 2
    assert {i.id for i in proposal.items} == {i for i, t in topic_of.items() if t == "schema"}
    assert "2 ids it named outside the context ignored" in proposal.preview_lines()[0]


@openai_only
async def test_tool_pairs_follow_their_partner(make, fake, fmt):
    h = await make()
    fake.queue(Reply(tool_calls=[("slash", {"command": "marks"})]), Reply(text="No marks set."))
    await h.say("list my marks")
    ctx = await h.context()
    call = next(i for i, kind, _ in ctx if kind == "tool_call")
    result_id = next(i for i, kind, _ in ctx if kind == "tool_result")
    fake.respond(lambda received: report([(call, "the marks call")]))
    await h.session.command(h.root, "/forget the marks lookup")
    assert call not in await context_ids(h) and result_id not in await context_ids(h)


@openai_only
async def test_a_rate_limited_chunk_is_retried_then_applied(make, fake, fmt):
    h = await make()
    topic_of = await write_exchanges(h, ["schema", "weather"])
    fake.respond(Responder(topic_of, "schema", faults=[Fault.rate_limit(retry_after=0)]))
    result = await h.session.command(h.root, "/forget schema")
    assert len(fake.requests) == 2 and result.lines[0].startswith("Forgot 2 messages")


@openai_only
@pytest.mark.parametrize("failure", ["for good", "malformed", "no tool call", "timeout"])
async def test_a_failed_chunk_leaves_the_context_untouched_with_one_line(make, fake, fmt, failure):
    h = await make(timeout=1, max_retries=1,
                   settings_of_session={"matcher_chunk_tokens": 300})
    topic_of = await write_exchanges(h, ["schema", "weather", "music"] * 4, padding=200)
    bad = {
        "for good": Fault.server_error(),
        "malformed": Reply(tool_calls=[("report_matches", {"matches": "3, 4"})]),
        "no tool call": Reply(text="Messages 3 and 4 match."),
        "timeout": Reply(text="", stall_after=0, stall_seconds=5),
    }[failure]
    last = max(topic_of)
    # Only the chunk holding the last message fails; the others answer at once.
    fake.respond(Responder(topic_of, "schema",
                           reply=lambda r: bad if last in shown_ids(r) else None))
    before = await h.events()
    with pytest.raises(CommandError) as caught:
        await h.session.command(h.root, "/forget schema")
    message = str(caught.value)
    assert "\n" not in message and "matcher failed (part" in message and "nothing was changed" in message
    assert len(await h.events()) == len(before)
    assert sorted(await context_ids(h)) == sorted(topic_of)


@openai_only
async def test_nothing_matches_changes_nothing(make, fake, fmt):
    h = await make()
    topic_of = await write_exchanges(h, ["schema", "weather"])
    fake.respond(lambda received: report([]))
    result = await h.session.command(h.root, "/forget cooking recipes")
    assert result.lines[0].startswith('Nothing matches "cooking recipes"')
    assert sorted(await context_ids(h)) == sorted(topic_of)


@openai_only
async def test_dry_run_prints_the_preview_and_writes_only_the_record(make, fake, fmt):
    h = await make()
    topic_of = await write_exchanges(h, ["schema", "weather"])
    fake.respond(Responder(topic_of, "schema"))
    before = len(await h.events())
    result = await h.session.command(h.root, "/forget --dry-run schema's design, \"orders\"")
    assert "schema's design, \"orders\"" in result.lines[0]
    assert any("about schema" in line for line in result.lines)
    assert [e.kind for e in (await h.events())[before:]] == ["command", "usage"]


@openai_only
async def test_matcher_model_option_and_bad_options(make, fake, fmt):
    h = await make()
    topic_of = await write_exchanges(h, ["schema"])
    fake.respond(Responder(topic_of, "schema"))
    await h.session.command(h.root, "/forget --matcher-model openai/cheap schema", review=Reviews(REFUSE))
    assert fake.requests[-1].body["model"] == "cheap"
    before = len(await h.events())
    for bad in ("/forget", "/forget --ids 3 schema", "/forget --local --ids 3", "/forget --nope x"):
        with pytest.raises(CommandError):
            await h.session.command(h.root, bad)
    assert len(await h.events()) == before


@openai_only
async def test_cancelling_the_match_stops_the_requests_and_writes_nothing(make, fake, fmt):
    h = await make()
    await write_exchanges(h, ["schema"])
    fake.queue(Reply(text="", stall_after=0, stall_seconds=30))
    before = len(await h.events())
    task = asyncio.ensure_future(h.session.propose(h.root, "/forget schema"))
    for _ in range(1000):  # a loaded machine may take seconds to import litellm
        if fake.requests:
            break
        await asyncio.sleep(0.01)
    assert fake.requests and not task.done()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert len(await h.events()) == before


def test_exchanges_of_the_written_conversation_pair_up():
    from ikigai_tui.core.matching import Candidate
    cands = [Candidate(1, "user", "q"), Candidate(2, "assistant", "a"), Candidate(3, "user", "q")]
    assert [[c.id for c in e] for e in exchanges(cands)] == [[1, 2], [3]]


@openai_only
async def test_undo_reverses_each_criteria_filter_walking_back(make, fake, fmt):
    h = await make()
    topic_of = await write_exchanges(h, ["schema", "weather", "music"])
    everything = sorted(topic_of)

    def answer(received):
        topic = "schema" if "Criteria: schema" in json.dumps(received.body) else "weather"
        return Responder(topic_of, topic)(received)

    fake.respond(answer)
    await h.session.command(h.root, "/forget schema")
    await h.session.command(h.root, "/forget weather")
    assert sorted(await context_ids(h)) == sorted(i for i, t in topic_of.items() if t == "music")
    await h.session.command(h.root, "/undo")
    assert sorted(await context_ids(h)) == sorted(i for i, t in topic_of.items() if t != "schema")
    await h.session.command(h.root, "/undo")
    assert sorted(await context_ids(h)) == everything
