"""/recall by meaning (issue 28, item 3): the topic's words in any inflection (cats: cat),
the seed's question form, a paraphrase with the local matcher, the LLM matcher with a
provider model, and `/recall QUESTION?`'s answer from the hits, cited by id, never in the
context; a reply found alone still brings its question."""

from __future__ import annotations

import json

from ikigai_tui.core.matching import MatchReport
from tests.fakes.server import Reply
from tests.integration.acceptance_helpers import Cli
from tests.integration.session_helpers import talk
from tests.integration.matcher_helpers import report, shown_ids, write_exchanges

CHAT = ("How should the database schema store orders?",
        "What is the weather like in Lisbon in November?",
        "Recommend a jazz album for a quiet evening.",
        "My cat keeps scratching the sofa, what can I do?",
        "How do I bake sourdough bread at home?",
        "What is a good stretching routine for runners?",
        "How do I renew my passport?",
        "Which index speeds up queries on created_at?",
        "Best way to learn Spanish quickly?",
        "What is the capital of Australia?")


def _hits(out: list[str]) -> list[tuple[int, str]]:
    """(id, the rest of the line) of each listed hit, in order."""
    return [(int(line.split()[0][1:]), line) for line in out if line.startswith("  #")]


def _users(cli: Cli) -> dict[str, int]:
    return {e["payload"]["content"]: e["id"] for e in cli.log() if e["kind"] == "user"}


def test_plurals_questions_and_paraphrases_with_the_local_matcher(tmp_path):
    cli = Cli(tmp_path / "m.db")
    cli.ok(*CHAT)
    users = _users(cli)
    cats = cli.ok("/recall cats")
    first = _hits(cats)[0]
    assert first[0] == users[CHAT[3]] and "words: cats" in first[1]  # cat, in its plural
    seed = cli.ok("/recall what did we discuss about database schema?")
    assert _hits(seed)[0][0] == users[CHAT[0]]
    assert not any(line.startswith("Answer") for line in seed)  # no model to answer offline
    for paraphrase, meant in (("SQL table design", CHAT[0]), ("rain in Portugal", CHAT[1])):
        hits = _hits(cli.ok(f"/recall {paraphrase}"))
        assert hits and hits[0][0] == users[meant], (paraphrase, hits)
        assert "meaning" in hits[0][1] and "words" not in hits[0][1]
    # Out of the context too, with its state; and still nothing for what is not there.
    cli.ok(f"/forget --ids {users[CHAT[4]]}")
    bread = _hits(cli.ok("/recall making bread"))
    assert bread[0][0] == users[CHAT[4]] and "forgotten by" in bread[0][1]
    assert cli.ok("/recall quantum chromodynamics")[0].startswith("No message")


async def test_a_reply_found_alone_brings_its_question(session, monkeypatch):
    """Words only in the reply, and a matcher that finds nothing: the question is listed
    with it ("question of") and the dialog's data groups them as one exchange."""
    root = session.tree.root.id
    await talk(session, root, "tell me about okapis")

    class Nothing:
        name = "nothing"

        async def match(self, *args, **kwargs):
            return MatchReport((), "nothing")

    monkeypatch.setattr(session, "matcher", lambda *a, **k: Nothing())
    out = await session.command(root, "/recall offline")  # in the offline model's reply only
    listed = [line for line in out.lines if line.startswith("  #")]
    assert "question of #" in listed[0] and listed[0].endswith("tell me about okapis")
    assert [d["role"] for d in out.data] == ["user", "assistant"]
    assert out.data[0]["exchange"] == out.data[1]["exchange"] == out.data[0]["id"]


async def test_the_llm_matcher_and_the_answer_cited_by_id(make, fake):
    h = await make()
    topic_of = await write_exchanges(h, ["weather", "schema", "music"])
    schema = sorted(i for i, t in topic_of.items() if t == "schema")

    def respond(received):
        body = json.dumps(received.body)
        if "report_matches" in body:
            return report([(i, "orders table design") for i in schema if i in shown_ids(received)])
        return Reply(text=f"You chose an orders table with a foreign key [#{schema[1]}].",
                     usage=(50, 12))

    fake.respond(respond)
    before = await h.session.replayer(h.root)
    context_before = list(before.ctx)
    out = await h.session.command(h.root, "/recall how did we store the orders?")
    hits = [line for line in out.lines if line.startswith("  #")]
    assert [int(line.split()[0][1:]) for line in hits] == schema
    assert all("orders table design" in line for line in hits)
    answer = out.lines[out.lines.index("Answer (from the hits; not added to the context):") + 1:]
    assert answer == [f"  You chose an orders table with a foreign key [#{schema[1]}]."]
    matcher_request, answer_request = fake.requests
    assert "how did we store the orders?" in json.dumps(answer_request.body)
    assert f"[#{schema[1]} assistant]" in json.dumps(answer_request.body)
    # Never in the context; its usage recorded as the matcher's is.
    assert list((await h.session.replayer(h.root)).ctx) == context_before
    purposes = [e.payload.get("purpose") for e in await h.events() if e.kind == "usage"]
    assert purposes[-2:] == ["match", "recall"]
