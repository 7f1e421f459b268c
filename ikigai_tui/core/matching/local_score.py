"""Scoring whole exchanges against a criterion (numpy; imported only when a match runs).

1. An exchange's vector is the mean of its messages' token vectors (each message weighs
   its token count, capped at WEIGHT_CAP so one long tool output does not drown the
   user's words; a user message USER_WEIGHT times that), normalised. Templated messages
   first lose what they share: when one role's messages are much alike (the offline
   model's replies all read "Offline model here. You said: ..."), their common direction
   is projected out and they weigh less (`templated`), so the template does not make
   every exchange look like every other.
2. Its raw score: the cosine with the criterion's vector plus `words` x its word score
   plus `tokens` x its token evidence (`token_evidence`: for each of the criterion's
   words, the best cosine with one of the exchange's own words, averaged; computed by
   core/matching/local.py for the exchanges the cosine ranks first, without the words a
   role repeats in nearly every message: see local.repeated). A pooled vector
   drifts with every other word of the exchange; a one-word criterion ("soccer") still
   finds its nearest word ("basketball") there. The raw score decides presence (3); the
   likely and possible ones are chosen on meaning alone (4).
3. Absent topic: when the mean raw score of the best exchanges is below `gate` (and the
   best alone is below `single`), nothing is likely. The best `seeds`, but at most one per
   SEEDS_PER exchanges: in a chat of three, one exchange may be all there is on the topic.
   Plain nearest-neighbour scoring always finds something; this gate is what says
   "nothing matches". The nearest few scoring `possible_gate` or more are then offered as
   possible (unticked in the preview), at most POSSIBLE_MAX.
4. Otherwise the criterion is expanded with the mean vector of those seeds that score
   `gate` or more themselves (pseudo-relevance feedback: the conversation's own words for
   the topic), scores are recomputed and, in a context of SMOOTH_FROM exchanges or more,
   smoothed with the two neighbouring exchanges (a discussion spans consecutive
   exchanges; in a short chat each exchange stands alone); the exchanges whose smoothed
   score is at least `relative` x the best one's, and whose own score is at least
   `floor`, are likely; one brought in by its neighbours alone must also score above the
   context's median. Those from `possible` x the best one's are possible.
5. Words: an exchange that holds every word of a criterion of `every_word` words or more
   ("database schema") matches whatever its meaning score.

The constants in TUNED were chosen on the tuning set (benchmarks/eval/sets/tune.json) by
benchmarks/matching_tune.py; benchmarks/matching.py reports the other sets.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

WEIGHT_CAP = 256
# A user message weighs this many times its tokens in its exchange's vector: the request
# says what the exchange is about, a long reply or tool output drifts (chosen on the
# tuning half of the first set, before the second existed: F1 0.675 -> 0.70 there).
USER_WEIGHT = 3.0


# Templated messages (see `templated`): the mean pairwise cosine from which a role's
# messages start to count as templated, and from which they fully do; a fully templated
# message weighs TEMPLATE_WEIGHT of its usual weight (chosen on the offline variants of the
# evaluation sets, benchmarks/matching_eval.py: 0.25 over 1, 0.5 and 0).
TEMPLATE_LOW = 0.2
TEMPLATE_HIGH = 0.5
TEMPLATE_WEIGHT = 0.25
TEMPLATE_SAMPLE = 8192
CHUNK = 8192  # rows widened to float32 at a time


@dataclass(frozen=True)
class Params:
    gate: float
    floor: float
    relative: float
    words: float
    expand: float
    smooth: float
    seeds: int = 3
    single: float = 1.0
    every_word: int = 2  # this many words or more, all in one exchange: a match (0: never)
    possible: float = 0.0  # share of the best score from which an exchange is possible
    possible_gate: float = 1.0  # when the gate finds the topic absent: possible from this
    tokens: float = 0.0  # weight of the token evidence in the raw score


SEEDS_PER = 4  # the gate's seeds: at most one per this many exchanges (at least one)
SMOOTH_FROM = 8  # exchanges from which neighbours are smoothed together
POSSIBLE_MAX = 5  # at most this many possible ones offered for a topic the gate finds absent


RARE_SHARE = 3  # a single word held by at most 1 in this many exchanges matches by itself

# Chosen on issue 29's tuning set only (benchmarks/eval/sets/tune.json, both sources) by
# benchmarks/matching_tune.py: macro F1 0.528 there with absent topics empty 89%, the
# token evidence weighing 0.5 in the gate's raw score (0.502 and 86% without it, 0.473
# with issue 12's values, 0.357 before the gate's seeds followed the context's size). The
# evidence lifts every raw score (a best cosine of a word with unrelated words is about
# 0.1), hence a gate of 0.28 (0.18 without it). floor, words and every_word are fixed there
# (issue 12's reasons); single is off (1.0: no better anywhere in the grid).
# possible / possible_gate: the lowest that add at most 2 unticked exchanges a criterion
# on the tuning set (1.98).
TUNED = Params(gate=0.28, floor=0.05, relative=0.25, words=0.0, expand=1.0, smooth=1.0,
               seeds=2, single=1.0, every_word=2, possible=0.175, possible_gate=0.168,
               tokens=0.5)


def exchange_vectors(means: Any, counts: Any, starts: Any, users: Any,
                     scales: Any = None) -> Any:
    """Normalised exchange vectors from the messages' mean vectors (rows in context order,
    any numeric type; each times its `scales` entry when given) and token counts;
    `starts`: the first row of each exchange; `users`: which rows are user messages.

    Summed by exchange size (one gather per distinct size: most exchanges have 2 to 6
    messages): np.add.reduceat over 100,000 rows takes 0.6 s, this about 40 ms. A
    template's direction is projected out of the sums, not of each message: the projection
    is linear, so it costs one number a message."""
    n = len(means)
    ends = np.append(starts[1:], n)
    sizes = ends - starts
    weights = np.minimum(counts, WEIGHT_CAP).astype(np.float32)
    weights[users] *= USER_WEIGHT
    if scales is not None:
        weights *= scales
    users = np.asarray(users, dtype=bool)
    # How templated a role is, from evenly spaced rows of a long context (at most
    # TEMPLATE_SAMPLE: a mean pairwise cosine needs no more to be within 0.01).
    step = max(1, -(-n // TEMPLATE_SAMPLE))
    common = [(users if k == 0 else ~users, share, u)
              for k, (_, share, u) in enumerate(templated(means[::step], users[::step]))
              if share > 0]
    for role, share, _ in common:
        weights[role] *= 1 - share * (1 - TEMPLATE_WEIGHT)
    sums = np.empty((len(starts), means.shape[1]), dtype=np.float32)
    # One float32 buffer for every block: widening into new arrays cost more in page
    # faults than in arithmetic (100,000 rows: 35-43 ms, this 22-28).
    # (One exchange can be longer than CHUNK: a turn of thousands of tool calls.)
    longest = int(sizes.max()) if sizes.size else 0
    wide = np.empty((min(n, max(CHUNK, longest)), means.shape[1]), dtype=np.float32)
    for size in np.unique(sizes).tolist():
        all_of_size = np.flatnonzero(sizes == size)
        step = max(1, CHUNK // size)  # bounded temporaries: ~8k rows at a time
        for at in range(0, all_of_size.size, step):
            which = all_of_size[at:at + step]
            rows = starts[which, None] + np.arange(size)
            block = wide[:rows.size].reshape(which.size, size, -1)
            np.copyto(block, np.take(means, rows, axis=0), casting="unsafe")
            weight = weights[rows]
            sums[which] = np.einsum("mk,mkd->md", weight, block)
            # The template's direction projected out of each message of its role, done on
            # the sums (it is linear): one number per message, not a vector.
            for role, share, u in common:
                sums[which] -= ((share * role[rows] * weight * (block @ u)).sum(axis=1)[:, None]
                                * u)
    sums *= 1 / np.maximum(np.sqrt(np.einsum("ij,ij->i", sums, sums)), 1e-9)[:, None]
    return sums  # normalised in place: a new 50 MB array costs 10 ms of page faults


def templated(means: Any, users: Any, chunk: int = CHUNK) -> list[tuple[Any, float, Any]]:
    """For the user rows of `means` and for the others: (the rows, how templated they are
    from 0 to 1, their common unit direction). The measure is the rows' mean pairwise
    cosine, estimated without bias from the length of their mean unit vector
    (E|mean|^2 = 1/n + (1 - 1/n) x mean pairwise cosine): 0 up to TEMPLATE_LOW (natural
    messages of one role sit near 0.05 on the evaluation sets), 1 from TEMPLATE_HIGH (the
    offline model's replies: about 0.75). Rows of zeros (no tokens) do not count.

    One pass in bounded chunks: kept int8 directions are unit vectors x 127 already."""
    roles = np.stack((users, ~users)).astype(np.float32)
    totals = np.zeros((2, means.shape[1]), dtype=np.float64)
    counts = np.zeros(2)
    quantised = means.dtype == np.int8
    for at in range(0, len(means), chunk):
        block = means[at:at + chunk].astype(np.float32)
        norms = np.linalg.norm(block, axis=1) if not quantised else None
        present = roles[:, at:at + chunk] * (block.any(axis=1) if quantised else norms > 0)
        if not quantised:
            block /= np.maximum(norms, 1e-9)[:, None]
        totals += present @ block
        counts += present.sum(axis=1)
    if quantised:
        totals /= 127
    out = []
    for role, total, n in zip((users, ~users), totals, counts):
        length = float(np.linalg.norm(total)) / max(n, 1)
        pairwise = (n * length * length - 1) / (n - 1) if n >= 2 else 0.0
        share = min(max((pairwise - TEMPLATE_LOW) / (TEMPLATE_HIGH - TEMPLATE_LOW), 0.0), 1.0)
        out.append((role, share, (total / max(length * n, 1e-9)).astype(np.float32)))
    return out


def normalised(x: Any) -> Any:
    """Rows of `x` (or `x`) as unit vectors; rows of zeros stay zeros. (np.linalg.norm
    takes 25 ms of the 35 this took for 50,000 exchange vectors; a dot product of each
    row with itself, 3.)"""
    x = np.asarray(x)
    norms = np.sqrt(np.einsum("...i,...i->...", x, x))[..., None]
    return x / np.maximum(norms, 1e-9)


def _smoothed(s: Any, weight: float) -> Any:
    if weight == 0 or len(s) < 2:
        return s
    before = np.concatenate((s[:1], s[:-1]))
    after = np.concatenate((s[1:], s[-1:]))
    return (s + weight * (before + after) / 2) / (1 + weight)


def select(query: Any, exchanges: Any, words: Any, params: Params = TUNED,
           n_words: int = 0, tokens: Any = None) -> tuple[Any, Any]:
    """(indices of the matching exchanges, each exchange's plain cosine with the query):
    the likely ones of `tiers`."""
    likely, _, meaning = tiers(query, exchanges, words, params, n_words, tokens)
    return likely, meaning


def tiers(query: Any, exchanges: Any, words: Any, params: Params = TUNED,
          n_words: int = 0, tokens: Any = None) -> tuple[Any, Any, Any]:
    """(likely exchanges, possible ones, each exchange's plain cosine with the query).
    `words`: each exchange's word score; `n_words`: how many words the criterion has;
    `tokens`: each exchange's token evidence (none given: its cosine stands in, as for an
    exchange of one word). Likely ones are ticked in the preview, possible ones listed
    unticked."""
    meaning = exchanges @ query
    evidence = params.words * words + params.tokens * (meaning if tokens is None else tokens)
    raw = meaning + evidence
    n = len(raw)
    # An exchange holding every word of a criterion of several words ("database schema")
    # matches whatever its meaning score; one word in passing is weaker evidence.
    every = 0 < params.every_word <= n_words
    by_words = np.flatnonzero(words >= 1 - 1e-6) if every else np.empty(0, np.int64)
    if n_words == 1 and params.every_word:
        # One word ("weather") that only a few exchanges hold names them; a word most
        # exchanges hold says little.
        hits = np.flatnonzero(words >= 1 - 1e-6)
        if hits.size * RARE_SHARE <= n:
            by_words = hits
    none = np.empty(0, np.int64)
    if n == 0:
        return by_words, none, meaning
    # The gate looks at the best few exchanges, fewer in a short chat: in a chat of three
    # one exchange can be all there is on the topic.
    order = best(raw, max(params.seeds, POSSIBLE_MAX))
    seeds = order[:min(params.seeds, max(1, n // SEEDS_PER))]
    if float(raw[seeds].mean()) < params.gate and float(raw[seeds[0]]) < params.single:
        # Absent by the gate: the nearest few, if near enough, are offered unticked.
        near = order[:POSSIBLE_MAX]
        possible = np.setdiff1d(near[raw[near] >= params.possible_gate], by_words)
        return by_words, possible, meaning
    # Only exchanges that are on the topic themselves expand it (the best one always).
    seeds = seeds[(raw[seeds] >= params.gate) | (seeds == seeds[0])]
    expanded = normalised(query + params.expand * exchanges[seeds].mean(axis=0))
    own = exchanges @ expanded + params.words * words
    # Neighbours count only in a conversation long enough to hold a discussion of
    # several exchanges: in a short chat each exchange stands alone.
    final = _smoothed(own, params.smooth) if n >= SMOOTH_FROM else own
    top = float(final.max())
    threshold = params.relative * top
    # An exchange its neighbours bring in (its own score below the threshold) must still
    # be nearer the topic than the context's typical exchange: a discussion's follow-ups
    # are, an unrelated question asked between two on-topic exchanges is not.
    bridged = (own < threshold) & (own < float(np.median(own)))
    likely = np.union1d(np.flatnonzero((final >= threshold) & (own >= params.floor) & ~bridged),
                        by_words)
    maybe = np.flatnonzero((final >= params.possible * top) & (own >= params.floor))
    return likely, np.setdiff1d(maybe, likely), meaning


def best(scores: Any, k: int) -> Any:
    """The indices of the k best scores, best first (ties: the earlier first), without
    sorting them all (50,000 exchanges: 0.5 ms, not 4)."""
    if k < len(scores):
        kth = -np.partition(-scores, k - 1)[k - 1]  # the k-th best score
        above = np.flatnonzero(scores > kth)
        chosen = np.concatenate((above, np.flatnonzero(scores == kth)[:k - above.size]))
    else:
        chosen = np.arange(len(scores))
    return chosen[np.lexsort((chosen, -scores[chosen]))]


def token_evidence(query_words: Any, words: Any, owners: Any, n: int) -> Any:
    """Per exchange, the mean over the criterion's words of the best cosine between that
    word and one of the exchange's own words (a max-sim over a static table: "soccer"
    finds "basketball" even where the pooled vector of a long exchange drifts away).
    `query_words` and `words`: unit vectors; `owners`: each row of `words`'s exchange,
    ascending. Exchanges with no words score 0."""
    out = np.zeros(n, dtype=np.float32)
    if not len(words) or not len(query_words):
        return out
    cosines = query_words @ words.T  # criterion words x exchange words
    firsts = np.flatnonzero(np.r_[True, owners[1:] != owners[:-1]])
    out[owners[firsts]] = np.maximum.reduceat(cosines, firsts, axis=1).mean(axis=0)
    return out
