"""Acceptance, SPEC §4 `compact` row and §9, through `ikigai run` (offline model: its
extractive summary) and `context --json`; `@slash CMD` makes the offline model call the
slash tool, which gives tool exchanges without a provider."""

from __future__ import annotations

from tests.integration.acceptance_helpers import Cli


def shape(cli: Cli) -> list[tuple[int, str]]:
    return [(m["id"], m["role"]) for m in cli.context()["messages"]]


def test_compact_replaces_older_messages_by_one_summary_in_place_and_undo(database, tmp_path):
    cli = Cli(database("c"))
    cli.ok("m1 about apples", "m2 about pears", "m3 about plums", "m4 about figs")
    before = shape(cli)
    out = cli.ok("/compact")                               # keeps the last 2 turns
    assert any(line.startswith("Compacted 4 messages") for line in out), out
    after = cli.context()["messages"]
    assert after[0]["role"] == "summary" and "m1 about apples" in after[0]["content"]
    assert [(m["id"], m["role"]) for m in after[1:]] == before[4:]
    assert [e["kind"] for e in cli.log()].count("compact") == 1
    assert cli.ok("/undo")[0].startswith("Undid /compact")
    assert shape(cli) == before


def test_compact_up_to_a_mark_set_mid_exchange_never_splits_the_tool_exchange(database, tmp_path):
    cli = Cli(database("t"))
    # The LLM sets M between its tool call and the call's result.
    cli.ok("first", "@slash mark M", "third", "fourth")
    cli.ok("/compact --upto M")
    messages = cli.context()["messages"]
    roles = [m["role"] for m in messages]
    assert roles[0] == "summary"
    calls = [m["call_id"] for m in messages if m["role"] == "tool_call"]
    results = [m["call_id"] for m in messages if m["role"] == "tool_result"]
    assert calls == results and calls                      # the pair is whole, on one side
    cli.ok("/undo", "/fork M --name kid", "/rewind M")
    for agent in (None, "kid"):
        messages = cli.context(agent)["messages"]
        calls = [m["call_id"] for m in messages if m["role"] == "tool_call"]
        results = [m["call_id"] for m in messages if m["role"] == "tool_result"]
        assert calls == results, (agent, messages)
