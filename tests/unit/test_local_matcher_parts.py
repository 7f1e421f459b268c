"""The local matcher's parts without the model: criteria words, the exchange scoring
rules, and what importing it loads."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from ikigai_tui.core.matching.local_score import TUNED, Params, exchange_vectors, select
from ikigai_tui.core.matching.local_words import Terms, variants, word_scores


def test_criteria_keep_their_topic_words():
    assert Terms("the database schema discussion").words == ["database", "schema"]
    assert Terms("Everything about COOKING").words == ["cooking"]
    assert Terms("what we said about it").words == []
    assert Terms("what we said about it").text == "what we said about it"


def test_inflections_are_exact_terms():
    assert {"party", "parties"} <= set(variants("parties"))
    assert {"movie", "movies"} <= set(variants("movies"))
    assert {"cook", "cooks", "cooked", "cooking"} <= set(variants("cooking"))
    assert {"schema", "schemas"} <= set(variants("schema"))
    assert "part" not in variants("parties") and "ai" in variants("ai")


def test_word_scores_weigh_rare_words():
    terms = Terms("database schema")
    scores = word_scores(terms, {"database": {0, 1, 2}, "schema": {0}}, 4)
    assert scores[0] == 1.0 and 0 < scores[1] == scores[2] < 0.5 and scores[3] == 0


def test_word_hits_outside_the_context_are_dropped():
    from ikigai_tui.core.matching.local import _held

    terms = Terms("database schema")
    hits = {"database": [1, 3, 5], "databases": [2], "schemas": [1, 99]}
    ids = np.array([5, 1, 2, 3])  # context order need not be id order
    held = _held(terms, hits, ids, np.array([0, 0, 1, 1]))
    assert held == {"database": {0, 1}, "schema": {0}}


def _unit(*rows):
    x = np.array(rows, dtype=np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_nothing_passes_the_gate_for_an_absent_topic():
    ex = _unit([1, 0, 0], [0, 1, 0], [0.9, 0.1, 0])
    q = _unit([0, 0, 1])[0]
    chosen, meaning = select(q, ex, np.zeros(3, np.float32), TUNED)
    assert chosen.size == 0 and meaning.max() < TUNED.gate


def test_a_present_topic_selects_its_exchanges_only():
    ex = _unit([1, 0, 0], [0.95, 0.05, 0], [0, 1, 0], [0, 0, 1], [0.97, 0, 0.03])
    q = _unit([1, 0, 0])[0]
    params = Params(gate=0.5, floor=0.0, relative=0.6, words=0.0, expand=0.5, smooth=0.0)
    chosen, _ = select(q, ex, np.zeros(5, np.float32), params)
    assert chosen.tolist() == [0, 1, 4]


def test_neighbours_bring_in_a_follow_up_not_an_unrelated_question():
    # cat, capital of France, cat, "and what else?", cat, quicksort, quicksort
    ex = _unit([1, 0, 0], [0, 1, 0], [1, 0, 0], [0.3, 0.5, 0.5], [1, 0, 0], [0, 0, 1], [0, 0, 1])
    q = _unit([1, 0, 0])[0]
    params = Params(gate=0.5, floor=0.0, relative=0.3, words=0.0, expand=0.0, smooth=1.0)
    chosen, _ = select(q, ex, np.zeros(7, np.float32), params)
    assert chosen.tolist() == [0, 2, 3, 4]


def test_plurals_and_doubled_consonants_find_their_base_words():
    assert "cat" in variants("cats") and "dog" in variants("dogs") and "pet" in variants("pets")
    assert "program" in variants("programming") and "stop" in variants("stopped")
    assert "new" not in variants("news") and "bu" not in variants("bus")
    assert "fal" not in variants("falling") and "fall" in variants("falling")


def test_every_word_of_a_several_word_criterion_matches_alone():
    ex = _unit([1, 0], [0, 1])
    q = _unit([0, 1])[0]
    words = np.array([1.0, 0.0], np.float32)
    params = Params(gate=2.0, floor=0.0, relative=0.5, words=0.0, expand=0.0, smooth=0.0,
                    single=2.0)
    assert select(q, ex, words, params, n_words=2)[0].tolist() == [0]
    assert select(q, ex, words, params, n_words=1)[0].tolist() == []


def test_a_single_word_few_exchanges_hold_matches_them_a_common_one_does_not():
    ex = _unit([1, 0], [0, 1], [0, 1], [0, 1], [0, 1], [0, 1])
    q = _unit([1, 1])[0]
    params = Params(gate=2.0, floor=0.0, relative=0.5, words=0.0, expand=0.0, smooth=0.0,
                    single=2.0)  # meaning alone passes nothing
    rare = np.array([0, 1, 0, 0, 1, 0], np.float32)  # 2 of 6 exchanges say "weather"
    assert select(q, ex, rare, params, n_words=1)[0].tolist() == [1, 4]
    common = np.array([1, 1, 1, 0, 1, 0], np.float32)  # 4 of 6: the word says little
    assert select(q, ex, common, params, n_words=1)[0].tolist() == []


def test_a_long_message_does_not_drown_its_exchange():
    means = _unit([1, 0], [0, 1])
    short_long = exchange_vectors(means, np.array([10, 100_000]), np.array([0]),
                                  np.array([False, False]))
    assert short_long[0, 0] > 0.03  # capped weight: the short message still counts
    np.testing.assert_allclose(np.linalg.norm(short_long, axis=1), 1, rtol=1e-5)
    user_first = exchange_vectors(means, np.array([10, 10]), np.array([0]), np.array([True, False]))
    assert user_first[0, 0] > 2 * user_first[0, 1]  # the request weighs more than the reply


def test_kept_vectors_round_trip_within_a_small_error():
    from ikigai_tui.core.matching.local_vectors import block_of, decoded, quantised

    rng = np.random.default_rng(1)
    means = rng.normal(size=(50, 256)).astype(np.float32) * rng.uniform(0.01, 3, (50, 1))
    means[7] = 0  # a message with no tokens
    ids = np.arange(100, 150)[::-1].copy()
    block = block_of(ids, np.arange(50), *quantised(means))
    got_ids, tokens, directions, scales = decoded(block, 256)
    assert got_ids.tolist() == sorted(ids.tolist())
    back = directions.astype(np.float32) * scales[:, None]
    order = np.argsort(ids)
    norms = np.linalg.norm(means[order], axis=1, keepdims=True)
    assert (np.abs(back - means[order]) <= norms / 254 * 1.001 + 1e-6).all()  # half a step
    cosine = (back * means[order]).sum(1) / np.maximum(
        np.linalg.norm(back, axis=1) * np.linalg.norm(means[order], axis=1), 1e-12)
    assert (cosine[np.linalg.norm(means[order], axis=1) > 0] > 0.995).all()


def test_importing_the_matcher_loads_neither_numpy_nor_the_model():
    code = ("import sys, logging\n"
            "import ikigai_tui.core.matching.local, ikigai_tui.embed\n"
            "print([m for m in ('numpy', 'wordllama', 'tokenizers') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_loading_the_model_leaves_the_root_logger_alone():
    code = ("import logging\n"
            "from ikigai_tui.embed.wordllama import load_model\n"
            "load_model()\n"
            "root = logging.getLogger()\n"
            "print(len(root.handlers), root.level)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["0", str(__import__("logging").WARNING)]


def test_templated_messages_lose_what_they_share():
    from ikigai_tui.core.matching.local_score import templated

    rng = np.random.default_rng(3)
    natural = rng.normal(size=(40, 64)).astype(np.float32)  # unrelated messages
    template = rng.normal(size=64).astype(np.float32)
    replies = natural + 4 * template  # every reply the same boilerplate plus its own words
    everyone = np.ones(40, bool)
    assert templated(natural, everyone)[0][1] == 0
    _, share, direction = templated(replies, everyone)[0]
    assert share == 1 and float(direction @ template) / np.linalg.norm(template) > 0.95
    assert templated(replies[:1], everyone[:1])[0][1] == 0  # one message is no template
    assert templated(replies, ~everyone)[0][1] == 0 and templated(replies, ~everyone)[1][1] == 1
    kept = np.rint(replies / np.linalg.norm(replies, axis=1, keepdims=True) * 127).astype(np.int8)
    kept[5] = 0  # a message with no tokens
    assert templated(kept, everyone)[0][1] == 1  # kept int8 directions too
    # Two exchanges on different topics, each a user message and a templated reply: the
    # template would make them alike; projected out, they are as apart as their topics.
    users = np.array([True, False] * 20)
    mixed = np.where(users[:, None], natural, replies)
    starts = np.arange(0, 40, 2)
    vectors = exchange_vectors(mixed, np.full(40, 10), starts, users)
    kept = exchange_vectors(natural, np.full(40, 10), starts, users)
    off_diagonal = ~np.eye(20, dtype=bool)
    assert np.abs(vectors @ vectors.T)[off_diagonal].mean() < 0.25
    assert np.abs((vectors * kept).sum(axis=1)).min() > 0.7  # each keeps its own topic


class _AxisWords:
    """Words as axes (a made-up static table): "soccer" and "basketball" share one."""

    name, dim = "axes", 3
    AXES = {"soccer": 0, "basketball": 0, "dinner": 1, "rice": 1}

    def __init__(self) -> None:
        self.words: list[str] = []

    def embed(self, texts):
        raise AssertionError("token evidence embeds no text")

    def word_vectors(self, words):
        self.words.extend(words)
        out = np.zeros((len(words), 3), dtype=np.float32)
        for i, w in enumerate(words):
            out[i, self.AXES.get(w, 2)] = 1
        return out


def test_token_evidence_covers_the_best_exchanges_by_meaning_and_keeps_word_vectors(
        monkeypatch):
    from ikigai_tui.core.matching import Candidate, local

    monkeypatch.setattr(local, "TOKEN_TOP", 2)
    texts = ["what is for dinner tonight", "rice", "shall we play basketball", "great game",
             "basketball finals"]
    cands = [Candidate(i, "user" if i % 2 == 0 else "assistant", t) for i, t in enumerate(texts)]
    embedder = _AxisWords()
    matcher = local.LocalMatcher(None, embedder)  # type: ignore[arg-type]
    starts, ends = np.array([0, 2]), np.array([2, 4])
    # Two exchanges, both in the top 2: the basketball one holds the criterion's word's axis.
    both = matcher._token_evidence(Terms("soccer"), cands, starts, ends, np.array([0.1, 0.2]))
    assert both.tolist() == [0.0, 1.0]
    assert sorted(embedder.words) == ["basketball", "dinner", "game", "great", "play",
                                      "rice", "shall", "soccer", "tonight"]
    embedder.words.clear()
    # Three exchanges, the third (about basketball too) past the top 2 by meaning: it gets
    # the lowest computed, its words are not looked up, nor are those already seen.
    three_starts, three_ends = np.array([0, 2, 4]), np.array([2, 4, 5])
    evidence = matcher._token_evidence(Terms("soccer"), cands, three_starts, three_ends,
                                       np.array([0.3, 0.2, 0.1]))
    assert evidence.tolist() == [0.0, 1.0, 0.0]
    assert embedder.words == []


def test_the_best_few_are_those_a_full_stable_sort_puts_first():
    """The gate's seeds and the nearest possible ones come from a partition, not a sort of
    every exchange: the same ones, in the same order, ties going to the earlier."""
    from ikigai_tui.core.matching.local_score import best

    rng = np.random.default_rng(29)
    for _ in range(500):
        scores = rng.integers(0, 4, int(rng.integers(1, 30))).astype(np.float32) / 4
        k = int(rng.integers(1, 8))
        assert best(scores, k).tolist() == np.argsort(-scores, kind="stable")[:k].tolist()


def test_exchange_vectors_are_weighted_means_whatever_the_block_size(monkeypatch):
    """Exchanges are summed in blocks of CHUNK rows through one buffer; an exchange longer
    than a block (a turn of thousands of tool calls) is summed whole all the same."""
    from ikigai_tui.core.matching import local_score

    rng = np.random.default_rng(7)
    sizes = [2, 3, 9, 1, 2, 12, 2]  # 9 and 12 exceed the block of 4 rows set below
    starts = np.cumsum([0] + sizes[:-1])
    users = np.zeros(sum(sizes), dtype=bool)
    users[starts] = True
    means = rng.normal(size=(sum(sizes), 6)).astype(np.float32)
    counts = rng.integers(1, 400, sum(sizes))
    weights = np.minimum(counts, local_score.WEIGHT_CAP) * np.where(users, local_score.USER_WEIGHT, 1)
    expected = np.stack([(means[a:a + k] * weights[a:a + k, None]).sum(axis=0)
                         for a, k in zip(starts, sizes)])
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    monkeypatch.setattr(local_score, "CHUNK", 4)
    got = local_score.exchange_vectors(means, counts, starts, users)
    assert np.allclose(got, expected, atol=1e-5)
