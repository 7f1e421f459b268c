"""The local matcher over a real store with the real embedding model: by meaning and by
words, nothing for an absent topic, whole exchanges, vectors computed once and kept."""

from __future__ import annotations

import asyncio

import pytest

from ikigai_tui.core.gateway import RequestCancelled
from ikigai_tui.core.matching import MatchProgress, exchanges
from ikigai_tui.core.matching import local as local_module
from ikigai_tui.core.matching.local import LocalMatcher
from ikigai_tui.store.sqlite.store import Store
from ikigai_tui.embed import WordLlamaEmbedder
from tests.integration.local_matcher_helpers import (
    COOKING, DATABASE, FOOTBALL, MADE_UP, CountingEmbedder, conversation_store, ids_of,
)


@pytest.fixture(scope="module")
def model() -> WordLlamaEmbedder:
    return WordLlamaEmbedder()  # loaded once for the module


@pytest.fixture
async def convo(tmp_path, model):
    store, cands = await conversation_store(tmp_path / "log.db")
    embedder = CountingEmbedder(model)
    yield LocalMatcher(store, embedder), cands, embedder, store
    await store.close()


def assert_whole_exchanges(cands, matched: set[int]) -> None:
    for group in exchanges(cands):
        ids = {c.id for c in group}
        assert ids <= matched or not ids & matched, f"exchange {sorted(ids)} split"


async def matched(matcher, cands, criteria: str) -> set[int]:
    report = await matcher.match(criteria, "forget", cands)
    assert report.matcher == "local (words + meaning)"
    ids = [m.id for m in report.matches]
    assert len(ids) == len(set(ids))
    assert_whole_exchanges(cands, set(ids))
    return set(ids)


async def test_finds_a_topic_by_meaning_without_its_words(convo):
    matcher, cands, _, _ = convo
    food = await matched(matcher, cands, "food and meals")
    assert food == ids_of(cands, COOKING)
    soccer = await matched(matcher, cands, "everything about soccer")
    assert soccer == ids_of(cands, FOOTBALL)


async def test_finds_a_topic_by_its_words_with_the_whole_exchange(convo):
    matcher, cands, _, _ = convo
    found = await matched(matcher, cands, "the database schema discussion")
    assert ids_of(cands, DATABASE[:1]) <= found  # the tool call and its result included
    assert not found & ids_of(cands, COOKING + MADE_UP)
    report = await matcher.match("the database schema discussion", "forget", cands)
    reasons = {m.id: m.reason for m in report.matches}
    assert reasons[cands[8].id].startswith("words: database, schema; meaning 0.")


async def test_words_the_model_cannot_know_still_match(convo):
    matcher, cands, _, _ = convo
    assert await matched(matcher, cands, "the frobnicator quuxbar rename") == ids_of(cands, MADE_UP)


@pytest.mark.parametrize("criteria", ["astronomy and planets", "the stock market",
                                      "everything about quantum physics", "knitting"])
async def test_an_absent_topic_matches_nothing(convo, criteria):
    matcher, cands, _, _ = convo
    assert await matched(matcher, cands, criteria) == set()


async def test_the_same_in_both_modes(convo):
    matcher, cands, _, _ = convo
    forget = await matcher.match("food and meals", "forget", cands)
    remember = await matcher.match("food and meals", "remember", cands)
    assert forget.matches == remember.matches


async def test_vectors_are_computed_once_and_kept(convo, model, tmp_path):
    matcher, cands, embedder, store = convo
    await matcher.match("food and meals", "forget", cands)
    assert matcher.computed == len(cands)
    assert sum(embedder.calls) == len(cands) + 1  # the messages, then the criterion
    embedder.calls.clear()
    await matcher.match("everything about soccer", "forget", cands)
    assert matcher.computed == len(cands)
    assert embedder.calls == [1]  # only the criterion
    # Another matcher (another process, later) reads them back from the store.
    again = LocalMatcher(store, CountingEmbedder(model))
    await again.match("the stock market", "forget", cands)
    assert again.computed == 0 and again.embedder.calls == [1]
    # A new message gets its vector; the others are not recomputed.
    event = await store.append("a", "user", {"content": "And a dessert recipe?"})
    from ikigai_tui.core.matching import Candidate

    await again.match("food and meals", "forget", [*cands, Candidate(event.id, "user", "And a dessert recipe?")])
    assert again.computed == 1


async def test_progress_after_each_batch(convo, monkeypatch):
    matcher, cands, _, _ = convo
    monkeypatch.setattr(local_module, "BATCH", 8)
    steps: list[MatchProgress] = []
    await matcher.match("food", "forget", cands, progress=steps.append)
    total = (len(cands) + 7) // 8
    assert total >= 3
    assert steps == [MatchProgress(i, total) for i in range(1, total + 1)]


async def test_a_cancel_stops_between_batches_and_keeps_what_was_computed(convo, monkeypatch):
    matcher, cands, _, store = convo
    monkeypatch.setattr(local_module, "BATCH", 8)
    cancel = asyncio.Event()
    with pytest.raises(RequestCancelled):
        await matcher.match("food", "forget", cands, progress=lambda _: cancel.set(),
                            cancellation=cancel)
    assert matcher.computed == 8
    blocks = await store.message_vectors(f"{matcher.embedder.name}/q8", cands[0].id, cands[-1].id)
    assert [len(b.ids) // 8 for b in blocks] == [8]  # what was computed before the cancel
    await matcher.match("food", "forget", cands)
    assert matcher.computed == len(cands)  # the rest, once


async def test_a_read_only_log_still_matches_and_keeps_nothing(tmp_path, model):
    store, cands = await conversation_store(tmp_path / "log.db")
    await store.close()
    ro = await Store.open(tmp_path / "log.db", readonly=True)
    try:
        matcher = LocalMatcher(ro, CountingEmbedder(model))
        found = await matched(matcher, cands, "food and meals")
        assert found == ids_of(cands, COOKING)
        assert await ro.message_vectors(f"{model.name}/q8", cands[0].id, cands[-1].id) == []
    finally:
        await ro.close()


async def test_nothing_to_match(convo):
    matcher, cands, embedder, _ = convo
    assert (await matcher.match("food", "forget", [])).matches == ()
    assert (await matcher.match("   ", "forget", cands)).matches == ()
    assert embedder.calls == []


@pytest.mark.serial  # a wall-clock bound (5 s for 12 MB)
def test_a_huge_message_is_embedded_from_its_start(model):
    import time

    from ikigai_tui.embed.wordllama import MAX_CHARS

    text = "the database schema migration " * 400_000  # 12 MB
    start = time.perf_counter()
    means, counts = model.embed([text, "database schema"])
    assert time.perf_counter() - start < 5
    assert 0 < counts[0] <= MAX_CHARS  # only the first MAX_CHARS characters were read
    cosine = float(means[0] @ means[1]) / float((means[0] @ means[0]) ** 0.5 * (means[1] @ means[1]) ** 0.5)
    assert cosine > 0.5
