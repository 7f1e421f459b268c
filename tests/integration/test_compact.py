"""/compact (issue 15): side requests through real litellm against the loopback fake.

The request's contents (the structured instruction, FOCUS, exactly the messages outside
the latest turns), review (accept, edit, refuse), /undo, pieces then a summary of the
summaries, a context already full, a failing summariser, and the headless `run`.
"""

from __future__ import annotations

import json
import threading
import time

import pytest

from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.compaction import CompactionSettings
from ikigai_tui.core.compaction.prompt import SECTIONS
from ikigai_tui.core.compaction.proposal import CompactProposal, CompactVerdict
from ikigai_tui.core.commands.proposals import REFUSE
from tests.fakes.server import Fault, FakeProvider, Reply
from tests.integration.matcher_helpers import shown_ids, write_exchanges

openai_only = pytest.mark.parametrize("fmt", ["openai"], indirect=True)
SUMMARY = "## Goal\nDesign the orders schema.\n## Decisions (each with its reason)\nnone"


def is_compaction(received) -> bool:
    return "You summarise a conversation" in json.dumps(received.body)


class Reviews:
    def __init__(self, verdict=None):
        self.proposals: list[CompactProposal] = []
        self.verdict = verdict

    async def __call__(self, proposal):
        self.proposals.append(proposal)
        return self.verdict or CompactVerdict(True)


async def ids_of(h) -> list[int]:
    return [i for i, _k, _p in await h.context()]


async def test_the_request_holds_the_instruction_the_focus_and_the_older_messages(make, fake, fmt):
    h = await make()
    topic_of = await write_exchanges(h, ["schema", "weather", "music", "schema", "weather", "music"])
    fake.respond(lambda r: Reply(text=SUMMARY, usage=(300, 40)))
    before = await ids_of(h)
    events_before = len(await h.events())
    reviews = Reviews()
    result = await h.session.command(h.root, "/compact the schema decisions", review=reviews)
    (received,) = fake.requests
    body = json.dumps(received.body)
    for section in SECTIONS:
        assert f"## {section}" in body, section
    assert "verbatim" in body and "the schema decisions" in body
    assert shown_ids(received) == before[:8]  # all but the latest 2 turns, once, in order
    (proposal,) = reviews.proposals
    assert proposal.model == h.model and proposal.summary.startswith(SUMMARY)
    assert result.lines[0].startswith("Compacted 8 messages (#")
    new = (await h.events())[events_before:]
    assert [e.kind for e in new] == ["command", "usage", "compact"]
    assert new[1].payload["purpose"] == "compact" and new[1].payload["input_tokens"] == 300
    compact = new[2].payload
    assert compact["ids"] == before[:8] and compact["focus"] == "the schema decisions"
    assert compact["after"] < compact["before"]
    assert await ids_of(h) == [new[2].id, *before[8:]]
    # The next turn sends the summary in place of the messages it replaced.
    fake.respond(lambda r: Reply(text="Noted."))
    assert await h.say("And now?")
    sent = json.dumps(fake.requests[-1].body)
    assert "Design the orders schema." in sent
    assert "How should the database schema store orders?" not in sent  # compacted away
    assert "Recommend a jazz album" in sent  # a kept turn
    assert len(topic_of) == 12


@openai_only
async def test_an_edited_summary_is_written_as_edited_and_undo_restores(make, fake, fmt):
    h = await make()
    await write_exchanges(h, ["schema", "weather", "music", "schema"])
    fake.respond(lambda r: Reply(text=SUMMARY))
    before = await ids_of(h)
    await h.session.command(h.root, "/compact", review=Reviews(CompactVerdict(True, summary="Mine.")))
    (event,) = await h.events(kind="compact")
    assert event.payload["summary"] == "Mine." and event.payload["edited"] is True
    ctx = (await h.session.replayer(h.root)).ctx
    assert ctx[event.id][2]["content"] == "Mine."
    result = await h.session.command(h.root, "/undo")
    assert "4 messages are back" in result.lines[0]
    assert await ids_of(h) == before


@openai_only
async def test_a_refused_summary_writes_only_the_command_record(make, fake, fmt):
    h = await make()
    await write_exchanges(h, ["schema", "weather", "music"])
    fake.respond(lambda r: Reply(text=SUMMARY))
    before, count = await ids_of(h), len(await h.events())
    result = await h.session.command(h.root, "/compact", review=Reviews(REFUSE))
    assert result.lines == ["Cancelled."]
    new = (await h.events())[count:]
    # The command record, and what the summary cost (spent either way): no compact.
    assert [e.kind for e in new] == ["command", "usage"]
    assert new[0].payload["output"] == ["Cancelled."]
    assert await ids_of(h) == before


@openai_only
async def test_dry_run_only_shows_and_bad_arguments_write_nothing(make, fake, fmt):
    h = await make()
    await write_exchanges(h, ["schema", "weather", "music"])
    fake.respond(lambda r: Reply(text=SUMMARY))
    count = len(await h.events())
    result = await h.session.command(h.root, "/compact --dry-run")
    assert result.lines[0].startswith("Would replace 2 messages")
    assert "Replaced messages:" in result.lines
    assert [e.kind for e in (await h.events())[count:]] == ["command", "usage"]  # no compact
    count += 2
    for bad in ("/compact --keep many", "/compact --upto A --from B", "/compact --upto nowhere",
                "/compact --keep 3", "/compact --wat"):
        with pytest.raises(CommandError):
            await h.session.command(h.root, bad)
    assert len(await h.events()) == count


@openai_only
async def test_pieces_run_concurrently_then_their_summaries_are_merged(make, fake, fmt):
    h = await make(settings_of_session={"compaction": CompactionSettings(piece_tokens=400,
                                                                         concurrency=3)})
    topic_of = await write_exchanges(h, ["schema", "weather", "music"] * 6, padding=300)
    lock = threading.Lock()
    flight = {"now": 0, "max": 0}
    merges: list[str] = []

    def respond(received):
        text = json.dumps(received.body)
        if "=== Part 1 ===" in text:
            merges.append(text)
            return Reply(text="MERGED " + SUMMARY)
        with lock:
            flight["now"] += 1
            flight["max"] = max(flight["max"], flight["now"])
        time.sleep(0.2)
        with lock:
            flight["now"] -= 1
        ids = shown_ids(received)
        return Reply(text=f"piece {ids[0]}-{ids[-1]}", usage=(100, 10))

    fake.respond(respond)
    reviews = Reviews()
    await h.session.command(h.root, "/compact", review=reviews)
    pieces = [r for r in fake.requests if "=== Part 1 ===" not in json.dumps(r.body)]
    assert len(pieces) >= 3 and len(merges) >= 1
    shown = [i for r in pieces for i in shown_ids(r)]
    expected = sorted(topic_of)[:-4]
    assert sorted(shown) == expected and len(shown) == len(set(shown))  # each once
    users = set(sorted(topic_of)[::2])
    for r in pieces:  # whole exchanges: a piece starts with a user message
        assert shown_ids(r)[0] in users
    assert flight["max"] >= 2  # concurrent
    for r in pieces:
        ids = shown_ids(r)
        assert f"piece {ids[0]}-{ids[-1]}" in merges[-1]
    (proposal,) = reviews.proposals
    assert proposal.pieces == len(pieces)
    assert proposal.summary.startswith("MERGED")
    (usage,) = await h.events(kind="usage")
    assert usage.payload["input_tokens"] == 100 * len(pieces) + 10 * len(merges)


@openai_only
async def test_a_context_already_full_is_compacted_with_requests_that_fit(make, fake, fmt):
    limit = 3_000
    h = await make(model_input_limits={"openai/fake-model": limit},
                   settings_of_session={"budget": 0})
    await write_exchanges(h, ["schema", "weather", "music"] * 5, padding=500)
    assert (await h.session.measure(h.root)).state == "full"
    fake.respond(lambda r: Reply(text=SUMMARY))
    await h.session.command(h.root, "/compact")
    assert len(fake.requests) >= 2
    for received in fake.requests:  # tiktoken-exact for openai: bytes/3 is a safe bound
        assert len(json.dumps(received.body)) / 3 < limit
    assert (await h.session.measure(h.root)).state != "full"
    assert await h.say("Go on.")


@openai_only
async def test_a_failing_summariser_leaves_the_context_and_writes_nothing(make, fake, fmt):
    h = await make()
    await write_exchanges(h, ["schema", "weather", "music"])
    fake.respond(lambda r: Fault.server_error())
    before, count = await ids_of(h), len(await h.events())
    with pytest.raises(CommandError, match="the summary failed.*nothing was changed"):
        await h.session.command(h.root, "/compact")
    assert len(await h.events()) == count
    assert await ids_of(h) == before


@openai_only
async def test_compact_model_from_the_settings_summarises(make, fake, fmt):
    h = await make(settings_of_session={"compaction": CompactionSettings(model="openai/summariser")})
    await write_exchanges(h, ["schema", "weather", "music"])
    fake.respond(lambda r: Reply(text=SUMMARY))
    await h.session.command(h.root, "/compact")
    assert fake.requests[0].model == "summariser"
    (event,) = await h.events(kind="compact")
    assert event.payload["model"] == "openai/summariser"


@openai_only
async def test_upto_and_from_a_mark_summarise_only_their_side(make, fake, fmt):
    h = await make()
    first = await write_exchanges(h, ["schema", "weather"])
    await h.session.command(h.root, "/mark M")
    second = await write_exchanges(h, ["music", "schema", "weather", "music"])
    fake.respond(lambda r: Reply(text=SUMMARY))
    await h.session.command(h.root, "/compact --dry-run --upto M")
    assert shown_ids(fake.requests[-1]) == sorted(first)
    await h.session.command(h.root, "/compact --from M --dry-run")
    assert shown_ids(fake.requests[-1]) == sorted(second)[:4]  # the latest 2 turns stay


def test_run_prints_the_summary_and_the_saving_and_dry_run_only_prints(ikigai, tmp_path):
    with FakeProvider() as fake:
        fake.respond(lambda r: Reply(text=SUMMARY) if is_compaction(r) else Reply(text="Fine."))
        db, script = tmp_path / "c.db", tmp_path / "s.txt"
        script.write_text("One.\nTwo.\nThree.\n/compact --dry-run\n/compact the plan\n")
        base = ("--db", str(db), "--model", "openai/x", "--api-base", fake.openai_base)
        done = ikigai(*base, "run", "--script", str(script), env={"OPENAI_API_KEY": "test-key"})
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    assert out[3].startswith("Would replace 2 messages (#"), out
    assert "Design the orders schema." in "\n".join(out)
    assert out[-1].startswith("Compacted 2 messages") and out[-1].endswith("/undo restores them.")
    log = json.loads(ikigai("--db", str(db), "log", "--json").stdout)
    events = log if isinstance(log, list) else log["events"]
    (compact,) = [e for e in events if e["kind"] == "compact"]
    assert compact["payload"]["focus"] == "the plan"
