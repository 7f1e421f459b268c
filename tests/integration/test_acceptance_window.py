"""Acceptance, SPEC §7: the sliding window as `context --json` reports it and as the
provider receives it (loopback fake, real litellm, exact tiktoken counts for gpt-4o)."""

from __future__ import annotations

import pytest

from tests.fakes.server import FakeProvider, Reply, validate_pairs
from tests.integration.acceptance_helpers import Cli, conversation


@pytest.fixture
def fake():
    with FakeProvider() as running:
        yield running


def words(n: int, word: str) -> str:
    return " ".join([word] * n)


def talk(cli: Cli, fake: FakeProvider, budget: str) -> None:
    fake.queue(Reply(text=words(60, "alpha")),
               Reply(tool_calls=[("slash", {"command": "marks"})]), Reply(text=words(60, "beta")),
               Reply(text=words(60, "gamma")), Reply(text=words(60, "delta")),
               Reply(text=words(40, "epsilon")))
    cli.ok("one " + words(50, "x"), "two", "three", "four", "five " + words(20, "y"),
           env={"IKIGAI_SLIDING_CONTEXT_TOKENS": budget})


def sent_after(cli: Cli, fake: FakeProvider, budget: str) -> list[tuple[str, str]]:
    fake.requests.clear()
    cli.ok("next", env={"IKIGAI_SLIDING_CONTEXT_TOKENS": budget})
    assert validate_pairs(fake.requests[0]) == []
    return conversation(fake.requests[0].body)


def turn_starts(ctx: dict) -> list[int]:
    return [m["id"] for m in ctx["messages"] if m["role"] == "user"]


# The system prompt and the tools take ~1,230 tokens of gpt-4o's count (the file and shell
# tools' definitions ~600 of them) and the talk ~410: at 1,450 and 1,600 the window prunes
# some turns and keeps others.
@pytest.mark.parametrize("budget", ["1450", "1600", "100"])
def test_window_prunes_whole_turns_and_the_provider_gets_exactly_it(database, tmp_path, fake, budget):
    cli = Cli(database("w"), fake)
    talk(cli, fake, budget)
    ctx = cli.context(env={"IKIGAI_SLIDING_CONTEXT_TOKENS": budget})
    assert ctx["budget"] == int(budget)
    flags = [m["in_window"] for m in ctx["messages"]]
    # A prefix out, a suffix in, starting at a user message (a whole turn), and the
    # latest turn is always in, even when it alone is over the budget.
    assert flags == sorted(flags) and flags[-1] is True and flags[0] is False
    first_in = next(m for m in ctx["messages"] if m["in_window"])
    assert first_in["role"] == "user" and first_in["id"] in turn_starts(ctx)
    assert ctx["window_start"] == first_in["id"]
    assert ctx["tokens"] <= ctx["budget"] or first_in["id"] == turn_starts(ctx)[-1]
    # What the provider receives next is the window, then the new message.
    shown = [m["content"] for m in ctx["messages"] if m["in_window"] and
             m["role"] in ("user", "assistant")]
    sent = [t for r, t in sent_after(cli, fake, budget) if r in ("user", "assistant") and t]
    if budget == "100":
        # Below even the system prompt and tools: the new message is the latest turn and
        # alone is sent (the window is derived from budget + context, the new one included).
        assert sent == ["next"]
    else:
        assert sent == [*shown, "next"]


def test_window_zero_disables_and_everything_is_sent(database, tmp_path, fake):
    cli = Cli(database("z"), fake)
    talk(cli, fake, "0")
    ctx = cli.context(env={"IKIGAI_SLIDING_CONTEXT_TOKENS": "0"})
    assert all(m["in_window"] for m in ctx["messages"])
    assert ctx["window_start"] == ctx["messages"][0]["id"]
    sent = sent_after(cli, fake, "0")
    assert sent[0][1].startswith("one x") and sent[-1] == ("user", "next")


def test_children_inherit_the_budget(database, tmp_path):
    cli = Cli(database("b"))
    cli.ok("hi", "/fork --name kid", env={"IKIGAI_SLIDING_CONTEXT_TOKENS": "5000"})
    assert cli.context("kid")["budget"] == 5000       # kept without the variable
    cli.ok("/budget 3000", "/fork --name kid2")
    assert cli.context("kid2")["budget"] == 3000


def test_context_json_has_the_documented_keys(database, tmp_path):
    cli = Cli(database("k"))
    cli.ok("hello", "/mark A")
    ctx = cli.context()
    assert {"agent", "model", "messages", "marks", "tokens", "budget", "window_start"} <= set(ctx)
    assert set(ctx["messages"][0]) >= {"id", "role", "content", "in_window"}
    assert ctx["marks"] == [{**ctx["marks"][0], "name": "A", "position": 2}]
    agents = cli.json("agents")
    assert set(agents[0]) >= {"id", "name", "parent", "status", "model"}
    assert agents[0]["parent"] is None and agents[0]["id"] == ctx["agent"]
