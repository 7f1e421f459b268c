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
