"""One presentation rule for proposals (issue 24, item 4; core/commands/proposals.py's
`Presentation`): `run`'s text output and its stream-json show the same previews. A
/compact's summary was printed as text but left out of the stream; explicit ids
(`--ids`) still show nothing (SPEC §5), and `--preview` shows them in both."""

from __future__ import annotations

import json

import pytest

from tests.integration.stream_schema import validate_line

TALK = "One.\nTwo.\nThree.\n"


def _run(ikigai, db, script: str, *fmt: str):
    done = ikigai("--db", str(db), "run", *fmt, input=script)
    assert done.returncode == 0, done.stderr
    return done


def _previews(stdout: str) -> list[list[str]]:
    objects = [json.loads(line) for line in stdout.splitlines()]
    assert all(validate_line(o) == [] for o in objects), objects
    return [o["lines"] for o in objects if o["type"] == "preview"]


def _text_preview(stdout: str, before: str) -> list[str]:
    """The lines `run` printed after the replies and before the command's result."""
    lines = stdout.splitlines()[3:]
    return lines[: next(n for n, line in enumerate(lines) if line.startswith(before))]


def test_stream_json_shows_a_compaction_s_summary_as_run_prints_it(ikigai, tmp_path):
    script = TALK + "/compact\n"
    text = _run(ikigai, tmp_path / "t.db", script).stdout
    printed = _text_preview(text, "Compacted ")
    assert printed[0].startswith("Replacing 2 messages (#1-#2,"), printed
    assert any("[#1] User: One." in line for line in printed), printed
    stream = _run(ikigai, tmp_path / "s.db", script, "--output-format", "stream-json").stdout
    assert _previews(stream) == [printed]


@pytest.mark.parametrize("command,shown", [
    ("/forget --ids 1", False),  # the user named them: no preview
    ("/forget --ids 1 --preview", True),  # asked to see them first
])
def test_named_ids_show_a_preview_only_when_asked_in_both_formats(ikigai, tmp_path, command, shown):
    script = TALK + command + "\n"
    text = _run(ikigai, tmp_path / "t.db", script).stdout
    printed = _text_preview(text, "Forgot ")
    stream = _run(ikigai, tmp_path / "s.db", script, "--output-format", "stream-json").stdout
    if shown:
        assert printed[0].startswith("Would forget 1 message: context"), printed
        assert _previews(stream) == [printed]
    else:
        assert printed == [] and _previews(stream) == []
