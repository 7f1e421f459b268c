"""Auto-compaction (issue 15 item 2) through real litellm against the loopback fake: the
warning once per crossing, compaction at the threshold once per crossing, after the turn;
the no-loop guarantee (3 failures in a row, then it stops and says so until the user
acts); a failing summariser leaves the context and the turn intact; "ask" waits for a
reviewer."""

from __future__ import annotations

import json

import pytest

from ikigai_tui.core.notices import CompactionNotice
from ikigai_tui.core.compaction import CompactionSettings
from ikigai_tui.core.compaction.proposal import CompactVerdict
from ikigai_tui.core.commands.proposals import REFUSE
from tests.fakes.server import Fault, Reply

pytestmark = pytest.mark.parametrize("fmt", ["openai"], indirect=True)
BUDGET = 4_000
WORDS = "plan " * 240  # ~240 tokens a message
SUMMARY = "## Goal\nKeep planning.\n## Artifact trail\nnone"


def is_compaction(received) -> bool:
    return "You summarise a conversation" in json.dumps(received.body)


class Provider:
    """Turns get a short reply; compaction requests `summary` (or a Fault)."""

    def __init__(self, summary=SUMMARY):
        self.summary = summary
        self.compactions = 0

    def __call__(self, received):
        # Usage as the request's size: the learned token factor stays near 1.
        usage = (len(json.dumps(received.body)) // 4, 5)
        if is_compaction(received):
            self.compactions += 1
            if isinstance(self.summary, Fault):
                return self.summary
            return Reply(text=self.summary, usage=usage, chunk_size=4_000)
        return Reply(text="ok", usage=usage)


async def share(h) -> float:
    w = await h.session.measure(h.root)
    return (w.tokens + w.outside) / (w.budget or w.limit)


def lines(h, kind: str | None = None) -> list[str]:
    return [n.text for n in h.of(CompactionNotice) if kind is None or n.kind == kind]


async def settings(make, **compaction):
    return await make(settings_of_session={"budget": BUDGET,
                                           "compaction": CompactionSettings(**compaction)})


async def test_the_warning_comes_once_per_crossing_and_off_never_compacts(make, fake, fmt):
    h = await settings(make)  # auto_compact off
    provider = Provider()
    fake.respond(provider)
    shares, crossings = [], 0
    for n in range(22):
        assert await h.say(f"step {n}: {WORDS}")
        shares.append(await share(h))
        if shares[-1] >= 0.8 and (len(shares) == 1 or shares[-2] < 0.8):
            crossings += 1
        assert len(lines(h, "warning")) == crossings, (n, shares)
        if n == 10:
            await h.session.command(h.root, "/clear")  # usage drops below; then rises back
    assert crossings == 2, shares
    assert lines(h, "warning")[0].startswith("History ") and " of the 4K window (8" in \
        lines(h, "warning")[0] and ": /compact or /forget to make room" in lines(h, "warning")[0]
    assert max(shares) >= 0.9 and provider.compactions == 0  # off: never compacts
    assert await h.events(kind="compact") == []


async def test_compaction_at_the_threshold_after_the_turn_once_per_crossing(make, fake, fmt):
    h = await settings(make, auto="on", keep=1)
    provider = Provider()
    fake.respond(provider)
    for n in range(20):
        before = await share(h)
        compactions = provider.compactions
        assert await h.say(f"step {n}: {WORDS}")
        after_turn_events = await h.events(kind="compact")
        if provider.compactions > compactions:
            # It ran after this turn, when the turn had taken usage over compact_at.
            assert provider.compactions == compactions + 1  # at most once a turn
            event = after_turn_events[-1]
            assert event.payload["auto"] is True
            assert await share(h) < 0.9
            assert before < 0.9 or n == 0
        else:
            assert await share(h) < 0.9 or not after_turn_events
    events = await h.events(kind="compact")
    assert len(events) >= 2 and provider.compactions == len(events)
    commands = [e.payload["text"] for e in await h.events(kind="command")]
    assert commands.count("/compact (automatic)") == len(events)
    assert any(t.startswith("Auto-compacted") for t in lines(h, "done"))


async def test_no_loop_three_failures_then_it_stops_until_the_user_acts(make, fake, fmt):
    h = await settings(make, auto="on")
    # A summary longer than what it replaces makes no room: each attempt fails.
    provider = Provider(summary="## Goal\n" + " ".join(f"detail{i}" for i in range(3_000)))
    fake.respond(provider)
    n = 0
    while await share(h) < 0.9:
        assert await h.say(f"step {n}: {WORDS}")
        n += 1
    assert provider.compactions == 1
    for _ in range(5):  # four more turns: two more attempts, then none
        assert await h.say(f"more: {WORDS}")  # the turns themselves succeed
    assert provider.compactions == 3
    errors = lines(h, "error")
    assert len(errors) == 3 and "(3 of 3)" in errors[-1] and "would not make room" in errors[0]
    stopped = [t for t in lines(h, "warning") if t.startswith("Auto-compaction stopped")]
    assert len(stopped) >= 3  # said when it stops, and after each turn until the user acts
    assert await h.events(kind="compact") == []
    # The user acts: a /compact by hand (accepted); the policy may try again.
    provider.summary = SUMMARY
    await h.session.command(h.root, "/compact --keep 1",
                            review=lambda p: _accept(p))
    compactions = provider.compactions
    assert compactions == 4  # the user's own
    for n in range(20):  # usage rises back over compact_at: the policy compacts again
        assert await h.say(f"again {n}: {WORDS}")
        if provider.compactions > compactions:
            break
    assert provider.compactions == compactions + 1
    assert len(await h.events(kind="compact")) == 2


async def _accept(_proposal):
    return CompactVerdict(True)


async def test_a_failing_summariser_leaves_the_context_and_the_turn_intact(make, fake, fmt):
    h = await settings(make, auto="on")
    provider = Provider(summary=Fault.server_error())
    fake.respond(provider)
    n = 0
    while await share(h) < 0.9:
        assert await h.say(f"step {n}: {WORDS}")
        n += 1
    ctx = [i for i, _k, _p in await h.context()]
    (error,) = lines(h, "error")
    assert error.startswith("Auto-compaction failed (1 of 3): the summary failed")
    assert "tried again after the next turn" in error
    assert await h.events(kind="compact") == [] and await h.events(kind="error") == []
    assert [i for i, _k, _p in await h.context()] == ctx
    first = provider.compactions
    provider.summary = SUMMARY
    assert await h.say(f"next: {WORDS}")  # retried after this turn, and it works
    assert provider.compactions == first + 1
    assert len(await h.events(kind="compact")) == 1


async def test_ask_hands_the_summary_to_the_reviewer_and_writes_nothing_before(make, fake, fmt):
    h = await settings(make, auto="ask")
    fake.respond(Provider())
    asked = []
    h.session.compactor.reviewer = asked.append
    n = 0
    while not asked:
        assert await h.say(f"step {n}: {WORDS}")
        n += 1
    assert await h.events(kind="compact") == []
    await h.session.answer(asked[0], REFUSE)
    assert await h.events(kind="compact") == []
    assert await h.say(f"more: {WORDS}") and len(asked) == 1  # not again: no loop


async def test_ask_without_a_reviewer_applies_it_as_run_does(make, fake, fmt):
    h = await settings(make, auto="ask")
    fake.respond(Provider())
    n = 0
    while not await h.events(kind="compact"):
        assert await h.say(f"step {n}: {WORDS}")
        n += 1
        assert n < 30


async def test_never_while_another_compaction_of_the_agent_runs(make, fake, fmt):
    h = await settings(make, auto="on")
    provider = Provider()
    fake.respond(provider)
    h.session.compactor.running.add(h.root)
    n = 0
    while await share(h) < 0.9:
        assert await h.say(f"step {n}: {WORDS}")
        n += 1
    assert await h.say(f"more: {WORDS}") and provider.compactions == 0
    h.session.compactor.running.discard(h.root)
    assert await h.say(f"more: {WORDS}") and provider.compactions == 1
