"""local_score.tiers on exchange vectors made to score as wanted (issue 29 items 3-4)."""

from __future__ import annotations

import numpy as np

from ikigai_tui.core.matching import local_score


def scored(cosines: list[float]) -> tuple[np.ndarray, np.ndarray]:
    """(query, exchange vectors) whose cosines with the query are `cosines`; the first
    exchange is the query itself, so expanding the query by it changes nothing."""
    n = len(cosines)
    query = np.zeros(n + 1, dtype=np.float32)
    query[0] = 1
    vectors = np.zeros((n, n + 1), dtype=np.float32)
    for i, c in enumerate(cosines):
        vectors[i, 0] = c
        vectors[i, i + 1] = np.sqrt(1 - c * c)
    return query, vectors


def tiers(cosines: list[float]):
    query, vectors = scored(cosines)
    likely, possible, _ = local_score.tiers(query, vectors, np.zeros(len(cosines)))
    return sorted(int(i) for i in likely), sorted(int(i) for i in possible)


def test_in_a_short_chat_neighbours_never_bring_in_an_unrelated_exchange():
    # Exchange 1 sits between two on the topic; smoothed, it would score 0.575 of 0.8.
    likely, possible = tiers([1.0, 0.2, 0.9, 0.1, 0.1])
    assert likely == [0, 2]
    assert possible == [1]  # near enough to be offered, unticked


def test_in_a_long_conversation_a_follow_up_between_two_on_topic_is_taken():
    likely, _ = tiers([1.0, 0.2, 0.9, 0.02] + [0.1] * 8)
    assert likely == [0, 1, 2]


def test_one_exchange_on_the_topic_in_a_chat_of_three_passes_the_gate():
    likely, _ = tiers([0.4, 0.05, 0.02])
    assert likely == [0]


def test_an_absent_topic_offers_only_the_nearest_as_possible():
    likely, possible = tiers([0.12, 0.11, 0.02, 0.01] * 3)
    assert likely == []
    assert possible and len(possible) <= local_score.POSSIBLE_MAX
    assert set(possible) <= {0, 1, 4, 5, 8, 9}


def test_token_evidence_is_each_criterion_word_s_best_match_averaged():
    query_words = np.eye(3, dtype=np.float32)[:2]  # two criterion words: axes 0 and 1
    words = np.array([[1, 0, 0], [0, 0, 1],  # exchange 0: word 0 itself, an unrelated one
                      [0.6, 0.8, 0]], dtype=np.float32)  # exchange 2: near both
    owners = np.array([0, 0, 2])
    evidence = local_score.token_evidence(query_words, words, owners, 3)
    assert np.allclose(evidence, [0.5, 0.0, 0.7])  # exchange 1 has no words


def test_token_evidence_lets_a_topic_whose_pooled_cosine_is_low_through_the_gate():
    # One exchange of three holds a word near the criterion's ("soccer": "basketball")
    # while its pooled vector, diluted by the rest of the exchange, scores low.
    query, vectors = scored([0.15, 0.02, 0.01])
    words = np.zeros(3)
    near = local_score.tiers(query, vectors, words, tokens=np.array([0.6, 0.1, 0.1]))[0]
    far = local_score.tiers(query, vectors, words, tokens=np.array([0.1, 0.1, 0.1]))[0]
    assert sorted(int(i) for i in near) == [0]
    assert not len(far)
