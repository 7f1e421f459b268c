"""Texts for the generated logs (gen.py, tui.py, preview.py, window.py): made-up words,
some non-ASCII, in runs of log-normally distributed lengths. Seeded: the same seed gives
the same texts, which the cached logs rely on (gen.GEN_VERSION)."""

from __future__ import annotations

import json
import random


def vocabulary(rng: random.Random) -> list[str]:
    """Made-up words (some non-ASCII) plus common English ones."""
    syll = ["ka", "lo", "mi", "ne", "ro", "su", "ta", "vi", "da", "pe", "qu", "zo", "é", "ü"]
    words = ["".join(rng.choice(syll) for _ in range(rng.randint(1, 4))) for _ in range(3000)]
    return words + ["the", "a", "to", "of", "and", "in", "is", "function", "test", "file", "error"]


def run_of_words(rng: random.Random, words: list[str], mean: int, low: int = 8,
                 high: int | None = None) -> str:
    """Words up to a log-normally distributed length around `mean` characters, at least
    `low`; with `high`, at most `high` (cut there)."""
    target = max(low, int(rng.lognormvariate(0, 0.8) * mean))
    if high is not None:
        target = min(high, target)
    out, size = [], 0
    while size < target:
        w = rng.choice(words)
        out.append(w)
        size += len(w) + 1
    return " ".join(out) if high is None else " ".join(out)[:target]


class Texts:
    """Pools of message texts with realistic lengths (some non-ASCII)."""

    def __init__(self, rng: random.Random) -> None:
        words = vocabulary(rng)
        self.rng = rng

        def text(mean: int) -> str:
            return run_of_words(rng, words, mean)

        self.user = [text(120) for _ in range(2000)]
        self.assistant = [text(500) for _ in range(2000)]
        self.result = [text(600) for _ in range(2000)]
        self.args = [json.dumps({"path": f"src/{rng.choice(words)}.py", "pattern": text(30)})
                     for _ in range(500)]

    def pick(self, pool: list[str]) -> str:
        return pool[self.rng.randrange(len(pool))]
