"""Headless /forget and /remember CRITERIA (SPEC §8, §11): `run` prints the preview and
applies it; --dry-run only prints; the real command line against the loopback fake."""

from __future__ import annotations

import json

import pytest

from tests.fakes.server import FakeProvider, Reply
from tests.integration.matcher_helpers import answer_by_word

KEY_ENV = {"OPENAI_API_KEY": "test-key"}


@pytest.fixture
def fake():
    with FakeProvider() as running:
        yield running


def test_run_prints_the_preview_then_applies_and_dry_run_only_prints(ikigai, tmp_path, fake):
    fake.respond(answer_by_word("lisbon"))
    fake.queue(Reply(text="Mild, 17 degrees in Lisbon."), Reply(text="Kind of Blue."))
    db = tmp_path / "f.db"
    script = tmp_path / "s.txt"
    script.write_text("What is the weather in Lisbon?\nRecommend a jazz album.\n"
                      "/forget --dry-run the Lisbon weather\n/forget the Lisbon weather\n")
    base = ("--db", str(db), "--model", "openai/x", "--api-base", fake.openai_base)
    done = ikigai(*base, "run", "--script", str(script), env=KEY_ENV)
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    previews = [n for n, line in enumerate(out) if line.startswith("Matched by openai/x (LLM): 2 messages")]
    assert len(previews) == 2, out
    assert out[previews[0] + 1].startswith("Would forget 2 messages: context")
    assert "mentions lisbon" in out[previews[0] + 2]
    assert out[-1] == "Forgot 2 messages."
    ctx = json.loads(ikigai(*base, "context", "--json").stdout)
    texts = [m.get("content", "") for m in ctx["messages"]]
    assert texts == ["Recommend a jazz album.", "Kind of Blue."], texts
    log = json.loads(ikigai(*base, "log", "--json").stdout)
    events = log if isinstance(log, list) else log["events"]
    (filt,) = [e for e in events if e["kind"] == "filter"]
    assert filt["payload"]["criteria"] == "the Lisbon weather"
    assert filt["payload"]["matcher"] == "openai/x (LLM)"


def test_a_failing_matcher_is_one_error_line_and_exit_1(ikigai, tmp_path, fake):
    fake.respond(lambda r: Reply(text="no tool") if "report_matches" in json.dumps(r.body) else None)
    fake.queue(Reply(text="Mild."))
    db = tmp_path / "f.db"
    script = tmp_path / "s.txt"
    script.write_text("What is the weather in Lisbon?\n/forget the weather\n")
    base = ("--db", str(db), "--model", "openai/x", "--api-base", fake.openai_base)
    done = ikigai(*base, "run", "--script", str(script), env=KEY_ENV)
    assert done.returncode == 1
    errors = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
    assert errors == ["Error: the matcher failed: the matcher did not answer with report_matches; "
                      "nothing was changed"]
    ctx = json.loads(ikigai(*base, "context", "--json").stdout)
    assert len(ctx["messages"]) == 2
