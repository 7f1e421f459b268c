"""The rule that keeps a summary of pruned turns honest (core/compaction/pruned.py): it
stands only for exactly the first messages of the context; its ranges break where a
message then out of the context lay, so one brought back among them breaks it."""

from __future__ import annotations

from ikigai_tui.core.compaction.pruned import (
    CUT_NOTE, block, covers_prefix, fit, from_row, ranges_of, reserve_of,
)
from ikigai_tui.core.tokens.window import Window
from ikigai_tui.tui.panes import rule_label


def test_ranges_break_only_where_a_removed_message_lay():
    assert ranges_of([1, 2, 5, 9], []) == [[1, 9]]
    assert ranges_of([1, 2, 5, 9], [3]) == [[1, 2], [5, 9]]
    assert ranges_of([1, 2, 5, 9], [0, 10]) == [[1, 9]]
    assert ranges_of([], [1]) == []


def test_the_summary_stands_for_exactly_the_first_messages():
    ranges = ((1, 2), (5, 9))  # made over 1 2 5 9 with 3 out of the context
    assert covers_prefix(ranges, 4, [1, 2, 5, 9, 12, 14])
    assert not covers_prefix(ranges, 4, [1, 2, 3, 5, 9, 12])  # 3 brought back (/undo)
    assert not covers_prefix(ranges, 4, [1, 5, 9, 12, 14])  # 2 forgotten
    assert covers_prefix(ranges, 4, [1, 2, 5, 9])  # nothing after them yet
    assert not covers_prefix(ranges, 4, [12, 14])  # cleared
    assert not covers_prefix(ranges, 4, [1, 2, 4, 9, 12])  # 5 forgotten, 4 restored: swapped
    assert not covers_prefix(((1, 9),), 3, [1, 2, 5, 9])  # one more inside: not all covered


def test_fit_cuts_a_summary_over_its_reserve():
    def count(text: str) -> int:
        return len(text) // 4

    short = "## Goal\nshort"
    assert fit(short, 100, count) == short
    long = "word " * 2_000
    cut = fit(long, 100, count)
    assert cut.endswith(CUT_NOTE) and count(block(cut)) <= 100
    assert fit(long, 1, count) == ""


def test_reserve_and_malformed_events():
    assert reserve_of(False, 0.1, 100_000) == 0
    assert reserve_of(True, 0.1, 0) == 0  # window off: nothing is pruned
    assert reserve_of(True, 0.1, 100_000) == 10_000
    assert from_row("a", (5, "pruned_summary", {"summary": "x"})) is None
    assert from_row("a", (5, "pruned_summary", {"summary": "x", "ranges": [[1, 2]],
                                                "messages": 0})) is None
    ok = from_row("a", (5, "pruned_summary", {"summary": "x", "ranges": [[1, 2]], "messages": 2,
                                              "tokens": 9, "model": "m"}))
    assert ok is not None and ok.covered == 2 and ok.ranges == ((1, 2),)


def _window(**kw) -> Window:
    base = dict(start=50, start_index=41, tokens=90_000, system=100, tools=600, pins=0,
                summaries=0, window=80_000, outside=40_000, pruned_turns=20, budget=100_000,
                limit=128_000, exact=True)
    base.update(kw)
    return Window(**base)


def test_the_rule_says_the_turns_above_are_summarised():
    assert rule_label(_window()) == " window starts here · 20 older turns not sent "
    label = rule_label(_window(reserve=10_000, pruned_summary=1_234, pruned_covered=41))
    assert label == (" window starts here · 41 earlier messages summarised (1.2K tokens, in "
                     "/context) · 20 older turns not sent verbatim ")


def test_the_offline_update_extends_the_earlier_extract_instead_of_nesting_it():
    from ikigai_tui.core.compaction.pruned_update import extractive_update
    from ikigai_tui.core.compaction.summarise import extractive_summary
    from ikigai_tui.core.matching import Candidate

    def extract(first: int, last: int) -> str:
        cands = []
        for n in range(first, last):
            cands += [Candidate(2 * n, "user", f"request {n} about src/m{n}.py"),
                      Candidate(2 * n + 1, "assistant", f"reply {n}")]
        return extractive_summary(cands, None, 10 ** 9).text

    one = extractive_update(None, extract(0, 3), 10_000)
    two = extractive_update(one, extract(3, 5), 10_000)
    assert two.count("Extractive summary") == 1 and "Earlier summary" not in two
    assert [f"request {n} " in two for n in range(5)] == [True] * 5
    assert all(f"- src/m{n}.py" in two for n in range(5))
    # Too many for the room: the first and the latest kept, one count of those left out.
    text = None
    for n in range(0, 40, 4):
        text = extractive_update(text, extract(n, n + 4), 1_200)
    assert len(text) <= 1_400 and "request 0 " in text and "request 39 " in text
    skipped = [line for line in text.splitlines() if "turns not listed" in line]
    listed = sum(f"request {n} " in text for n in range(40))
    assert len(skipped) == 1 and int(skipped[0].split()[2]) == 40 - listed
