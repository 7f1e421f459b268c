"""Tune the local matcher's thresholds on the tuning halves of the evaluation sets.

    python benchmarks/matching_tune.py            # prints the best Params and both halves

Grid search over local_score.Params on the "tune" halves only, of both sets (long topics
and short digressions) pooled, so that neither shape is favoured. The objective is the
macro F1 among the settings where absent topics return nothing at least ABSENT_GOAL of
the time (the benchmark's goal); the chosen values are copied by hand into
local_score.TUNED, and benchmarks/matching.py reports the "test" halves, which this
never looks at for choosing.

One value is fixed, not tuned: floor = 0.05 (with 0.0 the first set's tuning half scored
0.701 instead of 0.694 in an earlier round), so that an exchange scoring about zero
itself is never taken in only because its neighbour is on the topic (with 0.0, "soccer"
took the cooking exchange before the football ones in a short context). Ties (equal
tuning F1 and absent share) went to the setting that is safer in use: single = 0.5 (one
strong exchange is enough), every_word = 2 (several words all in one exchange match).
USER_WEIGHT (local_score) was chosen outside this grid: 1, 2 and 3 tried, 3 best on the
first set's tuning half.
"""

from __future__ import annotations

import asyncio
import itertools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import matching_eval  # noqa: E402

from ikigai_tui.core.matching import local_score  # noqa: E402
from ikigai_tui.core.matching.local_score import Params  # noqa: E402

ABSENT_GOAL = 0.8
GRID = {
    "gate": [0.17, 0.18, 0.19, 0.2, 0.21],
    "single": [0.5, 1.0],
    "seeds": [2, 3, 4, 5],
    "floor": [0.05],  # fixed, not tuned: see above
    "relative": [0.2, 0.25, 0.3, 0.4],
    "words": [0.0, 0.1, 0.2],
    "expand": [0.5, 1.0, 1.5],
    "smooth": [0.5, 0.75, 1.0],
    "every_word": [0, 2],
}


def score(rows, params: Params) -> tuple[float, float]:
    scored = matching_eval.Scored()
    for _, kind, scoring, truth, either in rows:
        chosen, _ = local_score.select(scoring.query, scoring.exchanges, scoring.words, params,
                                       len(scoring.terms.words))
        scored.add(kind, {int(i) for i in chosen} - either, truth)
    s = scored.summary()
    return s["f1"], s["absent"]


def main() -> None:
    rows = [r for path in matching_eval.SETS for r in asyncio.run(matching_eval.inputs(path=path))]
    tune = [r for r in rows if r[0] == "tune"]
    test = [r for r in rows if r[0] == "test"]
    keys = list(GRID)
    results = []
    for values in itertools.product(*(GRID[k] for k in keys)):
        params = Params(**dict(zip(keys, values)))
        f1, absent = score(tune, params)
        results.append((f1 if absent >= ABSENT_GOAL else f1 - 1, absent, params))
    results.sort(key=lambda r: (r[0], r[1]), reverse=True)
    for objective, absent, params in results[:10]:
        f1_test, absent_test = score(test, params)
        print(f"tune F1 {objective:.3f} absent {absent:.2f} | test F1 {f1_test:.3f} "
              f"absent {absent_test:.2f} | {params}")
    print(f"current TUNED: tune {score(tune, local_score.TUNED)} test {score(test, local_score.TUNED)}")


if __name__ == "__main__":
    main()
