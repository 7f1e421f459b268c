"""The pieces of /compact that need no provider: its arguments, what it selects (whole
turns, tool pairs, marks), the artifact trail, the extractive summary, the merge
grouping, and the config keys."""

from __future__ import annotations

import pytest

from ikigai_tui import config
from ikigai_tui.core.errors import UsageError
from ikigai_tui.core.commands.parse import ArgReader
from ikigai_tui.core.compaction import prompt
from ikigai_tui.core.compaction.select import CompactArgs, read_compact_args, select
from ikigai_tui.core.compaction.summarise import Summariser
from ikigai_tui.core.matching import Candidate
from ikigai_tui.core.replay.replayer import Mark, Replayer


def args(text: str) -> CompactArgs:
    return read_compact_args(ArgReader(text))


@pytest.mark.parametrize("text, expected", [
    ("", CompactArgs()),
    ("the auth work", CompactArgs("the auth work")),
    ("don't lose the schema", CompactArgs("don't lose the schema")),
    ("--keep 3 the auth work", CompactArgs("the auth work", 3)),
    ("the auth work --keep 3", CompactArgs("the auth work", 3)),
    ("--keep=0 --dry-run", CompactArgs(None, 0, dry_run=True)),
    ("the plan --upto M --dry-run", CompactArgs("the plan", upto="M", dry_run=True)),
    ("--from M", CompactArgs(from_="M")),
])
def test_arguments(text, expected):
    assert args(text) == expected


@pytest.mark.parametrize("text, message", [
    ("--keep", "missing a value after --keep"),
    ("--keep x", "--keep takes a number"),
    ("--keep -1", "--keep takes a number"),
    ("--upto A --from B", "not both"),
    ("--keep 1 --keep 2", "given twice"),
    ("--dry-run=yes", "unexpected option '--dry-run'"),
    ("--verbose the plan", "unexpected option '--verbose'"),
    ("x" * 2001, "FOCUS is too long"),
])
def test_bad_arguments(text, message):
    with pytest.raises(UsageError, match=message):
        args(text)


def _replayer(kinds: list[str]) -> Replayer:
    """Events 1..n of these kinds; a tool_result answers the latest tool_call."""
    rows = []
    call = 0
    for n, kind in enumerate(kinds, 1):
        payload: dict = {"content": f"m{n}"}
        if kind == "tool_call":
            call = n
            payload = {"call_id": f"c{n}", "name": "slash", "arguments": "{}"}
        elif kind == "tool_result":
            payload = {"call_id": f"c{call}", "call_event": call, "content": "r"}
        elif kind == "mark":
            payload = {"name": "M"}
        rows.append((n, kind, payload))
    return Replayer.from_rows(rows)


def test_select_keeps_the_latest_turns_whole():
    r = _replayer(["user", "assistant", "user", "assistant", "user", "assistant"])
    assert select(r, 2) == [1, 2]
    assert select(r, 1) == [1, 2, 3, 4]
    assert select(r, 0) == [1, 2, 3, 4, 5, 6]
    assert select(r, 3) == []


def test_select_never_splits_a_tool_pair_nor_takes_a_pending_call():
    r = _replayer(["user", "tool_call", "mark", "tool_result", "user", "tool_call"])
    mark = Mark("M", 3)
    assert select(r, 0) == [1, 2, 4, 5]  # the call still waiting for its result stays
    assert select(r, 0, upto=mark) == [1]  # the mark splits the pair: neither goes
    assert select(r, 0, from_=mark) == [5]


def test_artifacts_are_found_once_in_order_and_added_when_missing():
    texts = ["Edit src/app/main.py and see https://example.com/doc?a=1.",
             "Run `pytest -k slow` then open README.md; again src/app/main.py"]
    found = prompt.artifacts(texts)
    assert found == ["https://example.com/doc?a=1", "src/app/main.py", "pytest -k slow", "README.md"]
    summary = "## Goal\nx\n## Artifact trail\n- src/app/main.py"
    completed = prompt.complete_trail(summary, texts)
    assert completed.startswith(summary) and prompt.TRAIL_ADDED in completed
    assert "- pytest -k slow" in completed and completed.count("src/app/main.py") == 1
    assert prompt.complete_trail(completed, texts) == completed  # nothing more to add


def test_the_extractive_summary_is_labelled_and_keeps_requests_and_first_reply_lines():
    candidates = [Candidate(1, "user", "Set up the schema in db/schema.sql"),
                  Candidate(2, "assistant", "Done.\nSecond line.\nThird.\nFourth."),
                  Candidate(3, "tool_call", "slash({})"),
                  Candidate(5, "user", "Now the weather " + "w" * 2000)]
    text = prompt.extractive(candidates, "schema", 10_000)
    assert text.startswith(prompt.EXTRACTIVE_TITLE)
    assert "- [#1] User: Set up the schema in db/schema.sql" in text
    assert "Reply: Done. / Second line. / Third." in text and "Fourth" not in text
    assert "Tools: slash" in text and "- db/schema.sql" in text
    assert len(text) < 1_000  # a request that misses the focus is cut
    many = [Candidate(i, "user", f"request {i} " + "x" * 100) for i in range(500)]
    short = prompt.extractive(many, None, 5_000)
    assert len(short) < 6_000 and "turns not listed" in short
    assert "[#0]" in short and "[#499]" in short  # the first and the latest stay


def test_merge_groups_always_shorten_the_list():
    s = Summariser(None, "m", input_limit=2_000, count=lambda t: len(t) / 4)  # type: ignore[arg-type]
    texts = ["x" * 4_000] * 7
    groups = s._groups(texts)
    assert len(groups) < len(texts) and all(len(g) >= 2 for g in groups)
    assert sum(map(len, groups)) == 7


def test_config_keys(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('auto_compact = "ask"\ncompact_warn = 0.7\ncompact_at = 0.85\n'
                    'compact_model = "openai/mini"\nsummarize_pruned = true\n')
    c = config.load(config_path=str(path), env={})
    assert (c.auto_compact, c.compact_warn, c.compact_at, c.compact_model, c.summarize_pruned) == (
        "ask", 0.7, 0.85, "openai/mini", True)
    c = config.load(config_path=str(path), env={"IKIGAI_AUTO_COMPACT": "off"})
    assert c.auto_compact == "off"
    assert config.load(env={"IKIGAI_CONFIG": str(tmp_path / "none")}).auto_compact == "off"
    for text, message in [('auto_compact = "sometimes"', "must be"), ("compact_at = 1.5", "at most 1"),
                          ("summarize_pruned = 1", "true or false"),
                          ("compact_warn = 0.95", "must not be above")]:
        path.write_text(text + "\n")
        with pytest.raises(config.ConfigError, match=message):
            config.load(config_path=str(path), env={})
