"""The words of a criterion, and how much of them each exchange holds.

Criteria are what a user types ("the database schema discussion", "everything about
cooking"): framing words ("everything", "about", "discussion", "we said") and common
English words are dropped; what is left is the topic. Each word is looked up in the
full-text index with its inflections (schema: schemas; cooking: cook, cooks, cooked), so
no index change is needed for plural or -ing forms.

An exchange's word score is the idf-weighted share of the criterion's words it holds,
idf counted over the exchanges of the context: 1.0 when it holds every word, 0 when none.
A word absent from the whole context keeps its weight: "database migration" where only
"database" ever appears scores each such exchange below 1.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Set

WORD = re.compile(r"\w+", re.UNICODE)

# Common English words plus the words people frame a criterion with.
STOPWORDS = frozenset("""
a about above after again all also am an and any anything are around as at be been before
being below between both but by can could did do does doing done during each either
else every everything few for from had has have having he her here hers him his how i
if in into is it its itself just like many me mine more most much my no nor not now of
off on once only or other our ours out over own part parts same she should so some
something such than that the their theirs them then there these they thing things this
those through to too under until up us very was we were what when where whether which
while who whom why will with would you your yours yourself
chat chats conversation conversations discussed discussion discussions exchange
exchanges message messages mention mentioned mentions regarding related said say saying
stuff talk talked talking told topic topics whatever
""".split())

NOT_PLURAL = frozenset(("news", "lens", "series", "species"))


def bases(word: str) -> set[str]:
    """The word and what it may be an inflection of: parties -> party, movies -> movie,
    cooking -> cook."""
    out = {word}
    if (len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is"))
            and word not in NOT_PLURAL):
        out.add(word[:-1])  # cats -> cat, dogs -> dog (not bus, axis)
    if len(word) > 4:
        if word.endswith("ies"):
            out.update((word[:-3] + "y", word[:-1]))
        elif word.endswith("es"):
            out.update((word[:-2], word[:-1]))
        for ending in ("ing", "ed"):
            if word.endswith(ending):
                stem = word[:-len(ending)]
                out.update((stem, stem + "e"))
                if len(stem) > 2 and stem[-1] == stem[-2] and stem[-1] not in "aeiouflsz":
                    out.add(stem[:-1])  # programming -> program, stopped -> stop
                break
    return out


def variants(word: str) -> list[str]:
    """Inflections of the word's bases (exact terms for the full-text index): a plain
    stemmer's prefix would let "parties" find "particle"."""
    out: set[str] = set()
    for base in bases(word):
        out.update((base, base + "s", base + "es"))
        if len(base) > 2:
            stem = base[:-1] if base.endswith("e") else base
            out.update((stem + "ing", stem + "ed", base + "d" if base.endswith("e") else base + "ed"))
            if base.endswith("y"):
                out.add(base[:-1] + "ies")
    return sorted(out)


def content_words(text: str, cap: int) -> list[str]:
    """The first `cap` distinct words of a text that are neither common words nor numbers
    (what the token evidence compares a criterion's words with)."""
    out: dict[str, None] = {}
    for word in WORD.finditer(text[:cap * 32].lower()):
        w = word.group()
        if w not in STOPWORDS and not w.isdigit():
            out[w] = None
            if len(out) >= cap:
                break
    return list(out)


class Terms:
    """A criterion's topic: its content words (in order, for the embedding) and their
    inflections (for the full-text index)."""

    def __init__(self, criteria: str) -> None:
        words = [w for w in WORD.findall(criteria.lower()) if w not in STOPWORDS]
        self.words: list[str] = list(dict.fromkeys(words))
        self.forms: dict[str, list[str]] = {w: variants(w) for w in self.words}
        # The text embedded for meaning: the content words, or the criteria as typed when
        # all of it is common words.
        self.text = " ".join(self.words) or criteria.strip()

    def __bool__(self) -> bool:
        return bool(self.words)


def word_scores(terms: Terms, held: Mapping[str, Set[int]],
                n_exchanges: int) -> list[float]:
    """Per exchange, the score in [0, 1]. `held` maps each of the criterion's words to the
    exchanges (indices) holding it in one of its forms."""
    weights = {w: math.log(1 + n_exchanges / (1 + len(held.get(w, ())))) for w in terms.words}
    total = sum(weights.values()) or 1.0
    scores = [0.0] * n_exchanges
    for word, exchanges in held.items():
        for e in exchanges:
            scores[e] += weights[word] / total
    return scores
