"""Summaries of pruned turns as a user meets them, headless: `run` says each update in
one line on stdout; `context --json` shows the summary and its reserve; the log and the
export keep it (offline model: an extractive summary, labelled)."""

from __future__ import annotations

import re

from tests.integration.acceptance_helpers import Cli

ENV = {"IKIGAI_SLIDING_CONTEXT_TOKENS": "1500", "IKIGAI_SUMMARIZE_PRUNED": "true"}


def test_run_says_each_update_and_context_log_and_export_show_it(tmp_path):
    cli = Cli(tmp_path / "p.db", env=ENV)
    done = cli.run(*[f"message {i} " + "word " * 40 for i in range(8)])
    assert done.returncode == 0 and done.stderr == ""
    said = [line for line in done.stdout.splitlines() if line.startswith("Summarised")]
    assert said, done.stdout
    assert all(re.fullmatch(r"Summarised \d+ pruned messages? \(\d+ tokens; extractive, "
                            r"offline model\)", line) for line in said), said
    ctx = cli.context()
    pruned = ctx["pruned_summary"]
    assert ctx["summary_reserve"] == 150 and pruned is not None
    assert 0 < pruned["tokens"] <= 150 and pruned["extractive"] is True
    assert pruned["text"].startswith("Extractive summary")
    outside = [m for m in ctx["messages"] if not m["in_window"]]
    assert pruned["messages"] == len(outside)
    assert all(m.get("summarised") for m in outside)
    assert not any(m.get("summarised") for m in ctx["messages"] if m["in_window"])
    events = [e for e in cli.log() if e["kind"] == "pruned_summary"]
    assert len(events) == len(said) and events[-1]["id"] == pruned["event"]
    assert events[-1]["payload"]["summary"] == pruned["text"]
    shown = cli("context").stdout.splitlines()
    assert sum("(outside the window, summarised)" in line for line in shown) == len(outside)
    export = cli("export")
    assert export.returncode == 0 and "> summary of" in export.stdout
    # Off (the default): nothing of it.
    other = Cli(tmp_path / "q.db", env={"IKIGAI_SLIDING_CONTEXT_TOKENS": "1500"})
    quiet = other.run(*[f"message {i} " + "word " * 40 for i in range(8)])
    assert "Summarised" not in quiet.stdout
    assert other.context()["pruned_summary"] is None
    assert not [e for e in other.log() if e["kind"] == "pruned_summary"]


def test_json_output_reports_the_summaries_and_a_compaction(tmp_path):
    import json

    from tests.integration.stream_schema import validate_line

    cli = Cli(tmp_path / "j.db", env=ENV)
    lines = [f"message {i} " + "word " * 40 for i in range(8)] + ["/compact"]
    done = cli("run", "--output-format", "stream-json", input="".join(f"{x}\n" for x in lines))
    assert done.returncode == 0, done.stderr
    objects = [json.loads(line) for line in done.stdout.splitlines()]
    assert [p for o in objects for p in validate_line(o)] == []
    said = [o for o in objects if o["type"] == "compaction" and o["kind"] == "done"]
    events = [o for o in objects if o["type"] == "pruned_summary"]
    assert said and len(said) == len(events)
    assert all(o["text"].startswith("Summarised") for o in said)
    assert any(o["type"] == "compaction" and o["kind"] == "warning" for o in objects)
    stored = [e for e in cli.log() if e["kind"] == "pruned_summary"]
    assert [o["event_id"] for o in events] == [e["id"] for e in stored]
    assert events[-1]["summary"] == stored[-1]["payload"]["summary"]
    assert events[-1]["tokens"] == stored[-1]["payload"]["tokens"] > 0
    compact, = [o for o in objects if o["type"] == "compact"]
    logged, = [e for e in cli.log() if e["kind"] == "compact"]
    assert compact["event_id"] == logged["id"] and compact["replaced"] == len(logged["payload"]["ids"])
    assert compact["summary"] == logged["payload"]["summary"]
    whole = json.loads(cli("run", "--output-format", "json", input="/context\n").stdout)
    assert whole["type"] == "result" and whole["is_error"] is False
