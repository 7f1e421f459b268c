"""The local matcher: words and meaning on the CPU, no network, no download.

Used for the offline model and for `--local`. It scores whole exchanges (a user message
through its complete reply), never single messages, and returns every message of each
exchange that matches, or nothing when the topic is absent (core/matching/local_score.py
says how). Words come from the full-text index the log already keeps for /recall;
meaning from small static embeddings (ikigai_tui/embed/, behind the Embedder protocol).

A message's vector is computed once, the first time a match needs it, and kept in the
store; later queries read it back, and a matcher holds what it has read for the rest of
the session (core/matching/local_vectors.py). Computing runs in batches in a worker
thread, with progress after each batch and cancellation between batches; what was
computed before a cancel is kept.

numpy and the model load on the first match, never at program start.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterable, Sequence
from operator import attrgetter
from typing import TYPE_CHECKING, Any, NamedTuple

from ikigai_tui.core.gateway import RequestCancelled
from ikigai_tui.core.matching import POSSIBLE_REASON, Candidate, Match, MatchReport, ProgressFn
from ikigai_tui.core.matching import embedder as embedders
from ikigai_tui.core.matching.embedder import Embedder
from ikigai_tui.core.matching.local_words import Terms, content_words, word_scores
from ikigai_tui.core.ports import MatchIndex, StoreError
from ikigai_tui.core.provider import ProviderError

if TYPE_CHECKING:
    from ikigai_tui.core.matching.local_score import Params

NAME = "local (words + meaning)"
BATCH = 512  # messages embedded per worker-thread call (about 0.1 s each)
# Token evidence (local_score.token_evidence) is computed for the TOKEN_TOP exchanges the
# pooled meaning ranks first (all of a smaller context), from each message's first
# TOKEN_WORDS content words: it costs one small matrix product, not a pass over 100,000
# messages' texts. A matcher keeps the word vectors it computed, up to WORD_CACHE words.
TOKEN_TOP = 256
TOKEN_WORDS = 64
# A word one role writes in this share of its messages or more (at least REPEATED_MIN of
# them) is that role's boilerplate, not a topic: a template ("Offline model here. You
# said: ..."), a signature, a quoted first message. It is no token evidence for that role.
REPEATED_SHARE = 0.8
REPEATED_MIN = 3
WORD_CACHE = 50_000


class Scoring(NamedTuple):
    """A criterion and a context, ready to score (core/matching/local_score.select)."""

    terms: Terms
    query: Any  # the criterion's vector, normalised
    exchanges: Any  # the exchanges' vectors, normalised, in context order
    words: Any  # each exchange's word score
    held: dict[str, set[int]]  # each word's exchanges
    starts: Any  # each exchange's first candidate
    ends: Any  # ... and the one after its last
    tokens: Any  # each exchange's token evidence (local_score.token_evidence)
    ids: Any  # the candidates' message ids, in context order


class LocalMatcher:
    name = NAME

    def __init__(self, index: MatchIndex, embedder: Embedder, *,
                 params: Params | None = None) -> None:
        self.index = index
        self.embedder = embedder
        self.params = params
        self.computed = 0  # message vectors this matcher computed (tests, benchmarks)
        self._cache: Any = None  # local_vectors.VectorCache, made on the first match
        self._last: tuple[Any, Any, Any] | None = None  # (ids, starts, exchange vectors)
        self._words: dict[str, Any] = {}  # word -> its unit vector

    @classmethod
    def over(cls, index: MatchIndex, embedder: Embedder | None) -> LocalMatcher:
        """A matcher over `index` with `embedder`, or the process's default embedder (its
        model loads on the first match; core/matching/embedder.py). Its owner keeps it: it
        holds the loaded model and the vectors it read."""
        return cls(index, embedder if embedder is not None else embedders.default())

    async def match(self, criteria: str, mode: str, candidates: Sequence[Candidate], *,
                    progress: ProgressFn | None = None,
                    cancellation: asyncio.Event | None = None) -> MatchReport:
        cands = list(candidates)
        scoring = await self.prepare(criteria, cands, progress, cancellation)
        if scoring is None:
            return MatchReport((), NAME)
        from ikigai_tui.core.matching import local_score

        likely, possible, meaning = local_score.tiers(
            scoring.query, scoring.exchanges, scoring.words, self.params or local_score.TUNED,
            n_words=len(scoring.terms.words), tokens=scoring.tokens)

        return MatchReport(_matches(scoring, likely, meaning, ""), NAME,
                           possible=_matches(scoring, possible, meaning, POSSIBLE_REASON))

    async def prepare(self, criteria: str, cands: list[Candidate],
                      progress: ProgressFn | None = None,
                      cancellation: asyncio.Event | None = None) -> Scoring | None:
        """What the scoring needs (benchmarks/matching_tune.py tries other Params on it);
        None when there is nothing to match."""
        terms = Terms(criteria)
        if not cands or not terms.text:
            return None
        import numpy as np

        from ikigai_tui.core.matching import local_score, local_vectors

        ids = np.fromiter(map(attrgetter("id"), cands), dtype=np.int64, count=len(cands))
        if self._cache is None:
            self._cache = local_vectors.VectorCache(self.embedder.dim)
        texts: dict[int, str] = {}

        def text_of(message_id: int) -> str:
            if not texts:
                texts.update((c.id, c.text) for c in cands)
            return texts[message_id]

        try:
            await local_vectors.fill(self._cache, self.index, self.embedder, text_of, ids, BATCH,
                                     progress, lambda: _check(cancellation), self._counted)
            hits = await self._word_hits(terms, int(ids.min()), int(ids.max()))
        except StoreError as exc:
            raise ProviderError(f"local matcher: {exc}") from exc
        query, _ = await asyncio.to_thread(self.embedder.embed, [terms.text])
        _check(cancellation)
        users = np.fromiter((c.kind == "user" for c in cands), dtype=bool, count=len(cands))
        starts = np.flatnonzero(users)
        if not starts.size or starts[0] != 0:
            starts = np.concatenate(([0], starts))
        ends = np.append(starts[1:], len(cands))
        held = _held(terms, hits, ids, np.repeat(np.arange(len(starts)), ends - starts))
        words = np.asarray(word_scores(terms, held, len(starts)), dtype=np.float32)
        query = local_score.normalised(query[0])
        vectors = self._exchange_vectors(ids, starts, users)
        tokens = await asyncio.to_thread(self._token_evidence, terms, cands, starts, ends,
                                         vectors @ query)
        _check(cancellation)
        return Scoring(terms, query, vectors, words, held, starts, ends, tokens, ids)

    def _counted(self, n: int) -> None:
        self.computed += n

    def _exchange_vectors(self, ids: Any, starts: Any, users: Any) -> Any:
        """The context's exchange vectors; the last context's are reused while it has not
        changed (the same messages, split the same way)."""
        import numpy as np

        from ikigai_tui.core.matching import local_score, local_vectors

        last = self._last
        if last is not None and np.array_equal(last[0], ids) and np.array_equal(last[1], starts):
            return last[2]
        directions, scales, counts = local_vectors.gathered(self._cache, ids)
        vectors = local_score.exchange_vectors(directions, counts, starts, users, scales)
        self._last = (ids, starts, vectors)
        return vectors

    def _token_evidence(self, terms: Terms, cands: list[Candidate], starts: Any, ends: Any,
                        meaning: Any) -> Any:
        """Each exchange's token evidence; those past the TOKEN_TOP best by meaning get the
        lowest computed."""
        import numpy as np

        from ikigai_tui.core.matching import local_score

        n = len(starts)
        top = np.sort(local_score.best(meaning, TOKEN_TOP))
        words = {e: [(c.kind, content_words(c.text, TOKEN_WORDS)) for c in cands[starts[e]:ends[e]]]
                 for e in top.tolist()}
        boiler = repeated(m for messages in words.values() for m in messages)
        owners: list[int] = []
        texts: list[str] = []
        for e, messages in words.items():
            found = dict.fromkeys(w for kind, ws in messages for w in ws
                                  if w not in boiler.get(kind, ()))
            owners.extend([e] * len(found))
            texts.extend(found)
        vectors = self._word_vectors(texts + terms.words)
        found = local_score.token_evidence(vectors[len(texts):], vectors[:len(texts)],
                                           np.asarray(owners, dtype=np.int64), n)
        if top.size < n:
            rest = np.ones(n, dtype=bool)
            rest[top] = False
            found[rest] = found[top].min()
        return found

    def _word_vectors(self, words: list[str]) -> Any:
        """Unit vectors of words, from the matcher's own cache where it holds them."""
        import numpy as np

        from ikigai_tui.core.matching import local_score

        new = [w for w in dict.fromkeys(words) if w not in self._words]
        if len(self._words) + len(new) > WORD_CACHE:
            self._words.clear()
            new = list(dict.fromkeys(words))
        if new:
            vectors = local_score.normalised(np.asarray(
                embedders.word_vectors(self.embedder, new), dtype=np.float32))
            self._words.update(zip(new, vectors))
        if not words:
            return np.zeros((0, self.embedder.dim), dtype=np.float32)
        return np.stack([self._words[w] for w in words])

    async def _word_hits(self, terms: Terms, low: int, high: int) -> dict[str, list[int]]:
        if not terms:
            return {}
        forms = [f for fs in terms.forms.values() for f in fs]
        return await self.index.word_hits(list(dict.fromkeys(forms)), low, high)


def _matches(scoring: Scoring, chosen: Any, meaning: Any, sure: str) -> tuple[Match, ...]:
    """Every message of the `chosen` exchanges, each with its exchange's reason ("words:
    cooking; meaning 0.41") and meaning. Built from arrays, not exchange by exchange: a
    broad topic of a long context chooses thousands of exchanges (a loop of 7,000 took
    30 ms of a 100,000-message query, this ~8)."""
    import numpy as np

    chosen = np.sort(np.asarray(chosen, dtype=np.int64))
    if not chosen.size:
        return ()
    words = scoring.terms.words
    code = np.zeros(chosen.size, dtype=np.int64)  # bit k: the exchange holds word k
    for k, word in enumerate(words):
        held = np.fromiter(scoring.held[word], dtype=np.int64)
        code |= np.isin(chosen, held).astype(np.int64) << k
    prefix: dict[int, str] = {}
    for c in np.unique(code).tolist():
        found = ", ".join(w for k, w in enumerate(words) if c >> k & 1)
        prefix[c] = f"{sure}words: {found}; " if found else sure
    scores = meaning[chosen]
    reasons = [f"{prefix[c]}meaning {s:.2f}" for c, s in zip(code.tolist(), scores.tolist())]
    first, sizes = scoring.starts[chosen], scoring.ends[chosen] - scoring.starts[chosen]
    offsets = np.cumsum(sizes) - sizes
    rows = np.arange(int(sizes.sum())) - np.repeat(offsets - first, sizes)
    return tuple(map(Match._make, zip(scoring.ids[rows].tolist(),
                                      np.repeat(np.array(reasons, dtype=object), sizes).tolist(),
                                      np.repeat(scores, sizes).tolist())))


def _held(terms: Terms, hits: dict[str, list[int]], ids: Any, exchange_of: Any) -> dict[str, set[int]]:
    """Each word's exchanges: the message ids holding one of its forms, mapped to the
    exchange they belong to in this context (ids of other contexts are dropped)."""
    import numpy as np

    order = np.argsort(ids, kind="stable")
    sorted_ids = ids[order]
    held: dict[str, set[int]] = {}
    for word, forms in terms.forms.items():
        found = np.fromiter((i for f in forms for i in hits.get(f, ())), dtype=np.int64)
        at = np.minimum(np.searchsorted(sorted_ids, found), len(ids) - 1)
        inside = sorted_ids[at] == found
        held[word] = set(exchange_of[order[at[inside]]].tolist())
    return held


def _check(cancellation: asyncio.Event | None) -> None:
    if cancellation is not None and cancellation.is_set():
        raise RequestCancelled("local matcher: cancelled")


def repeated(messages: Iterable[tuple[str, list[str]]]) -> dict[str, set[str]]:
    """Per role (a message's kind), the words it repeats in REPEATED_SHARE of its messages
    or more, when it wrote REPEATED_MIN or more. `messages`: (kind, its distinct words)."""
    seen: dict[str, Counter[str]] = {}
    count: Counter[str] = Counter()
    for kind, words in messages:
        count[kind] += 1
        seen.setdefault(kind, Counter()).update(set(words))
    return {kind: {w for w, k in held.items() if k >= REPEATED_SHARE * count[kind]}
            for kind, held in seen.items() if count[kind] >= REPEATED_MIN}
