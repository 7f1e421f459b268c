"""The local matcher in small contexts and with short criteria (issue 29 item 4), through
the real embedder over a real store: a one-word criterion finds the one exchange about it
in a three-exchange chat, and neighbours never bring in an unrelated exchange there."""

from __future__ import annotations

import pytest

from ikigai_tui.core.events import AgentRecord, WriteBatch, message_text
from ikigai_tui.core.matching import Candidate, exchanges
from ikigai_tui.core.matching.local import LocalMatcher
from ikigai_tui.embed import WordLlamaEmbedder
from ikigai_tui.store.sqlite.store import Store

JAZZ = ("Who played trumpet on Kind of Blue, and is it a good first record to listen to?",
        "Miles Davis led it, with Coltrane and Bill Evans; it is a calm, modal album and a "
        "classic place to start.")
CATS = ("My kitten keeps scratching the sofa, how do I stop her?",
        "Give her a scratching post near the sofa, reward her when she uses it, and trim "
        "her claws.")
TAXES = ("When is the deadline for filing my income tax return?",
         "Usually the 15th of April; you can ask for an extension if you need more time.")
FRANCE = ("What is the capital of France?", "Paris.")
CAT_FOOD = ("Is wet or dry food better for an old cat?",
            "Wet food helps an older cat drink enough; many owners mix both.")
CAT_VET = ("How often should my cat see the vet?",
           "Once a year for a checkup, twice when she gets old.")


@pytest.fixture(scope="module")
def model() -> WordLlamaEmbedder:
    return WordLlamaEmbedder()


async def chat(path, pairs) -> tuple[Store, list[Candidate]]:
    store = await Store.open(path)
    batch = WriteBatch()
    batch.new_agents.append(AgentRecord("a", None, "a", "offline", "idle", 0.0, None))
    for user, reply in pairs:
        batch.add("a", "user", {"content": user})
        batch.add("a", "assistant", {"content": reply})
    events = await store.write(batch)
    return store, [Candidate(e.id, e.kind, message_text(e.kind, e.payload)) for e in events]


async def exchanges_matched(store, model, cands, criteria) -> list[int]:
    report = await LocalMatcher(store, model).match(criteria, "forget", cands)
    ids = {m.id for m in report.matches}
    return [n for n, group in enumerate(exchanges(cands)) if {c.id for c in group} <= ids]


@pytest.mark.parametrize("criteria, expected", [
    ("jazz", [0]), ("music", [0]), ("cats", [1]), ("my kitten", [1]), ("taxes", [2]),
    ("what did we say about the tax deadline?", [2]),
])
async def test_a_short_criterion_finds_its_exchange_in_a_three_exchange_chat(
        tmp_path, model, criteria, expected):
    store, cands = await chat(tmp_path / "log.db", [JAZZ, CATS, TAXES])
    try:
        assert await exchanges_matched(store, model, cands, criteria) == expected
    finally:
        await store.close()


@pytest.mark.parametrize("pairs, on_topic", [
    ([CATS, FRANCE, CAT_FOOD], [0, 2]),
    ([CATS, CAT_FOOD, FRANCE, CAT_VET, CATS], [0, 1, 3, 4]),
])
async def test_neighbours_never_bring_in_an_unrelated_exchange_in_a_short_chat(
        tmp_path, model, pairs, on_topic):
    store, cands = await chat(tmp_path / "log.db", pairs)
    try:
        found = await exchanges_matched(store, model, cands, "cats")
        assert set(found) <= set(on_topic) and found, found
    finally:
        await store.close()


def offline_pairs(users: list[str]) -> list[tuple[str, str]]:
    """The offline model's replies: a template that quotes the message and the context's
    first one, so every reply holds the first exchange's words."""
    from ikigai_tui.core.provider import Request
    from ikigai_tui.llm.offline import respond

    seen: list[dict] = []
    pairs = []
    for user in users:
        seen.append({"role": "user", "content": user})
        reply = respond(Request("offline", "", list(seen)))[0]
        seen.append({"role": "assistant", "content": reply})
        pairs.append((user, reply))
    return pairs


async def offered(tmp_path, model, pairs, criteria) -> list[int]:
    """The exchanges a match ticks or offers as possible."""
    store, cands = await chat(tmp_path, pairs)
    try:
        report = await LocalMatcher(store, model).match(criteria, "forget", cands)
    finally:
        await store.close()
    found = {m.id for m in (*report.matches, *report.possible)}
    return [n for n, group in enumerate(exchanges(cands)) if {c.id for c in group} & found]


@pytest.mark.parametrize("criteria", ["kittens", "pets", "the sofa", "cats"])
async def test_words_a_role_repeats_in_every_message_are_no_evidence(tmp_path, model, criteria):
    """Replies that all quote the first message (the offline model's) put its words in every
    exchange: they must not make any other exchange likely or possible than plain replies
    would."""
    users = [CATS[0], TAXES[0], FRANCE[0], JAZZ[0]]
    pairs = offline_pairs(users)
    assert all(CATS[0] in reply for _, reply in pairs)
    quoting = await offered(tmp_path / "quoting.db", model, pairs, criteria)
    plain = await offered(tmp_path / "plain.db", model, [(u, "Noted.") for u in users], criteria)
    assert 0 in quoting and set(quoting) <= set(plain), (quoting, plain)
