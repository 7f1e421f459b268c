"""/budget [TOKENS|off] (issue 13, item 20): shows or sets this agent's window budget,
written as an event (so a restart keeps it), undoable, inherited by children forked
after it, and the number the window, `/context` and `context --json` use."""

from __future__ import annotations

import json

import pytest

from ikigai_tui.cli.output import context_data
from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.handlers.settings import parse_budget
from ikigai_tui.core.session import Session, SessionSettings
from ikigai_tui.store.sqlite.store import Store
from ikigai_tui.llm.providers import Providers
from tests.integration.session_helpers import talk


async def test_show_set_and_the_window_follows(session):
    root = session.tree.root.id
    for i in range(6):
        await talk(session, root, f"a question about topic {i} " * 20)
    assert (await session.command(root, "/budget")).lines == [
        "Window budget: 100,000 tokens (the configured default)."]
    assert (await session.measure(root)).pruned_turns == 0
    out = await session.command(root, "/budget 2K")
    assert out.lines == ["Window budget set to 2,000 tokens (was 100,000 tokens)."]
    window = await session.measure(root)
    assert window.budget == 2_000 and window.pruned_turns > 0 and window.tokens <= 2_000
    assert (await session.command(root, "/budget")).lines == [
        "Window budget: 2,000 tokens (set with /budget)."]
    context = await session.command(root, "/context")
    [line] = [line for line in context.lines if line.startswith("Window: ")]
    assert line.startswith("Window: 2,000 tokens (set with /budget); starts at message ")
    data = await context_data(session, session.tree[root])
    assert (data["budget"], data["budget_source"]) == (2_000, "budget")
    [event] = [e for e in await session.store.events(root) if e.kind == "budget"]
    assert event.payload == {"budget": 2_000, "previous": 100_000}


async def test_off_undo_and_same_value(session):
    root = session.tree.root.id
    await talk(session, root, "hello")
    assert (await session.command(root, "/budget off")).lines == [
        "Window budget off: the sliding window is disabled (was 100,000 tokens)."]
    assert (await session.measure(root)).budget == 0
    count = await session.store.count_events()
    assert (await session.command(root, "/budget 0")).lines == [
        "Window budget is already off (the sliding window is disabled)."]
    assert await session.store.count_events() == count + 1  # the command record only
    out = await session.command(root, "/undo")
    assert out.lines[0].startswith("Undid /budget off (made 20")
    assert out.lines[0].endswith("the window budget is back to the configured default.")
    assert (await session.measure(root)).budget == 100_000
    assert (await session.command(root, "/budget")).lines == [
        "Window budget: 100,000 tokens (the configured default)."]


async def test_children_forked_after_it_inherit_it_and_a_restart_keeps_it(db_path):
    store = await Store.open(db_path)
    session = await Session.open(store, Providers(), SessionSettings(budget=50_000))
    root = session.tree.root.id
    before = (await session.command(root, "/fork --name before")).data
    await session.command(root, "/budget 20000")
    after = (await session.command(root, "/fork --name after")).data
    await session.command(after, "/budget 7,500")
    grandchild = (await session.command(after, "/fork --name grandchild")).data
    expected = {root: 20_000, before: 50_000, after: 7_500, grandchild: 7_500}
    assert {a: (await session.measure(a)).budget for a in expected} == expected
    assert (await session.command(after, "/undo")).lines[0].endswith(
        "the window budget is back to 20,000 tokens.")
    expected[after] = 20_000
    assert {a: (await session.measure(a)).budget for a in expected} == expected
    await session.close()
    await store.close()

    store = await Store.open(db_path)
    again = await Session.open(store, Providers(), SessionSettings(budget=90_000))
    try:
        assert {a: (await again.measure(a)).budget for a in expected} == expected
        sources = {a: (await context_data(again, again.tree[a]))["budget_source"] for a in expected}
        assert sources == {root: "budget", before: "fork", after: "fork", grandchild: "fork"}
        await again.command(root, "/undo")  # the root goes back to following the config
        assert (await again.measure(root)).budget == 90_000
    finally:
        await again.close()
        await store.close()


@pytest.mark.parametrize("text, tokens", [
    ("50000", 50_000), ("50,000", 50_000), ("50_000", 50_000), ("50K", 50_000),
    ("50k", 50_000), ("1.5M", 1_500_000), ("2.5k", 2_500), ("off", 0), ("OFF", 0), ("0", 0),
])
def test_parse_budget(text, tokens):
    assert parse_budget(text) == tokens


@pytest.mark.parametrize("args, message", [
    ("abc", "'abc' is not a number of tokens"),
    ("-5", "'-5' is not a number of tokens"),
    ("1.5", "'1.5' is not a number of tokens"),
    ("5 6", "unexpected argument '6'"),
    ("999999999999", "more than any model takes"),
])
async def test_bad_values_are_errors_and_write_nothing(session, args, message):
    root = session.tree.root.id
    count = await session.store.count_events()
    with pytest.raises(CommandError, match=message) as err:
        await session.command(root, f"/budget {args}")
    assert "Usage: /budget [TOKENS|off]" in str(err.value)
    assert await session.store.count_events() == count


async def test_a_dead_agent_shows_its_budget_but_cannot_change_it(session):
    root = session.tree.root.id
    kid = (await session.command(root, "/fork --name kid")).data
    await session.command(root, "/kill kid")
    assert (await session.command(kid, "/budget")).lines == [
        "Window budget: 100,000 tokens (inherited at fork)."]
    with pytest.raises(CommandError, match="dead"):
        await session.command(kid, "/budget 5000")


def test_context_json_shows_the_budget_set_in_a_script(ikigai, tmp_path):
    db = tmp_path / "b.db"
    script = tmp_path / "s.txt"
    script.write_text("hello\n/budget 30K\n/budget\n")
    done = ikigai("--db", str(db), "run", "--script", str(script))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-2:] == [
        "Window budget set to 30,000 tokens (was 100,000 tokens).",
        "Window budget: 30,000 tokens (set with /budget)."]
    ctx = json.loads(ikigai("--db", str(db), "context", "--json").stdout)
    assert (ctx["budget"], ctx["budget_source"]) == (30_000, "budget")
