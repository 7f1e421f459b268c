"""Usage so far (issue 13, item 21): each agent's input and output tokens to date and
their cost, from the usage events (what the providers reported), priced from litellm's
model map read as data; "unknown" when the map has no price. Shown by /context,
`context` and `agents` (text and JSON), and offered by the session for the agent tree."""

from __future__ import annotations

import asyncio
import importlib.util
import json
from pathlib import Path

from ikigai_tui.core.usage.ledger import Prices, UsageLedger, UsageTotals
from tests.fakes.server import Reply
from tests.integration.provider_helpers import MODELS


def _map_prices(model: str) -> tuple[float, float] | None:
    """The price per token straight from litellm's bundled JSON (not through our code)."""
    spec = importlib.util.find_spec("litellm")
    assert spec is not None and spec.submodule_search_locations
    path = Path(list(spec.submodule_search_locations)[0]) / "model_prices_and_context_window_backup.json"
    table = json.loads(path.read_text())
    provider, _, name = model.partition("/")
    for key in (model, name):
        info = table.get(key)
        if info and (key == model or info.get("litellm_provider", "").startswith(provider)):
            if "input_cost_per_token" in info:
                return info["input_cost_per_token"], info["output_cost_per_token"]
    return None


async def test_usage_and_cost_to_date_per_agent(h, fmt):
    h.fake.queue(Reply(text="One.", usage=(1_000, 30)), Reply(text="Two.", usage=(1_500, 45)))
    assert await h.say("first")
    assert await h.say("second")
    usage = await h.session.usages.totals(h.root)
    assert (usage.input_tokens, usage.output_tokens) == (2_500, 75)
    prices = _map_prices(MODELS[fmt])
    if prices is None:  # openai/fake-model: no price in the map
        assert not usage.cost_known and usage.unpriced == (MODELS[fmt],)
        assert usage.as_dict()["cost_usd"] is None
        assert usage.cost_text() == f"unknown (no price for {MODELS[fmt]})"
    else:
        expected = 2_500 * prices[0] + 75 * prices[1]
        assert usage.cost_known and abs(usage.cost - expected) < 1e-9
        assert usage.as_dict()["cost_usd"] == round(expected, 6)
    lines = (await h.session.command(h.root, "/context")).lines
    assert lines[-1] == usage.line()
    assert lines[-1].startswith("Usage so far: 2,500 tokens in, 75 out; cost ")

    # A child's usage is its own; the session answers at once for loaded agents.
    h.fake.queue(Reply(text="Child.", usage=(700, 10)))
    child = (await h.session.command(h.root, "/fork --name kid go")).data
    task = h.session.tree[child].task
    assert task is not None and await asyncio.wait_for(task, 20)
    kid = h.session.usages.now(child)
    assert kid is not None and (kid.input_tokens, kid.output_tokens) == (700, 10)
    assert (await h.session.usages.totals(h.root)).input_tokens == 2_500


def test_agents_and_context_show_usage(ikigai, tmp_path):
    db = tmp_path / "u.db"
    done = ikigai("--db", str(db), "run", input="hello\n/fork --name kid hi there\nagain\n")
    assert done.returncode == 0, done.stderr
    log = json.loads(ikigai("--db", str(db), "log", "--json").stdout)
    reported = [e["payload"] for e in log if e["kind"] == "usage"]
    assert len(reported) == 2
    agents = json.loads(ikigai("--db", str(db), "agents", "--json").stdout)
    root, kid = agents
    assert root["usage"] == {
        "input_tokens": sum(u["input_tokens"] for u in reported),
        "output_tokens": sum(u["output_tokens"] for u in reported),
        "cost_usd": 0.0, "cost": "$0", "unpriced_models": []}  # offline is free
    assert kid["usage"]["input_tokens"] > 0 and kid["usage"]["cost_usd"] == 0.0
    text = ikigai("--db", str(db), "agents").stdout.splitlines()
    assert text[0].endswith(f"{root['usage']['input_tokens']:,} in / "
                            f"{root['usage']['output_tokens']:,} out, $0")
    context = json.loads(ikigai("--db", str(db), "context", "--json").stdout)
    assert context["usage"] == root["usage"]
    assert "Usage so far:" in ikigai("--db", str(db), "context").stdout


def test_the_ledger_reads_each_usage_event_once():
    asked: list[str] = []

    def prices(model: str) -> Prices | None:
        asked.append(model)
        return None if model == "custom/x" else Prices(1e-6, 2e-6, 2e-6, 4e-6)

    ledger = UsageLedger(prices)
    history = [(1, "user", {"content": "hi"}),
               (2, "usage", {"model": "a/m", "input_tokens": 10, "output_tokens": 5})]
    first = ledger.totals("A", history)
    assert (first.input_tokens, first.output_tokens, first.unpriced) == (10, 5, ())
    assert abs(first.cost - (10e-6 + 10e-6)) < 1e-15
    history += [(3, "usage", {"model": "a/m", "input_tokens": 300_000, "output_tokens": 1}),
                (4, "usage", {"model": "custom/x", "input_tokens": 1, "output_tokens": 1,
                              "purpose": "match"})]
    totals = ledger.totals("A", history)
    assert (totals.input_tokens, totals.output_tokens) == (300_011, 7)
    assert abs(totals.cost - (20e-6 + 300_000 * 2e-6 + 4e-6)) < 1e-12  # tiered above 200K
    assert totals.unpriced == ("custom/x",) and not totals.cost_known
    assert totals.cost_text() == "unknown (no price for custom/x)"
    assert asked == ["a/m", "custom/x"]  # each model priced once
    assert ledger.totals("A", history) == totals  # nothing new: nothing read again
    assert ledger.totals("B", []) == UsageTotals()


async def test_the_report_and_the_ledger_agree(session):
    """`agents` sums the log in SQL; the session's ledger reads the agent's history: the
    same totals, tiered prices (a request above 200K input tokens) and unknown ones too."""
    from ikigai_tui.core.events import WriteBatch

    root = session.tree.root.id
    batch = WriteBatch()
    for model, given_in, given_out in [("gemini/gemini-2.5-pro", 1_000, 100),
                                       ("gemini/gemini-2.5-pro", 250_000, 2_000),
                                       ("openai/gpt-4o", 3_000, 300),
                                       ("offline", 500, 50)]:
        batch.add(root, "usage", {"model": model, "input_tokens": given_in,
                                  "output_tokens": given_out})
    await session.store.write(batch)
    report = (await session.usages.report())[root]
    ledger = await session.usages.totals(root)
    assert (report.input_tokens, report.output_tokens) == (254_500, 2_450)
    assert (ledger.input_tokens, ledger.output_tokens) == (254_500, 2_450)
    assert report.cost_known and abs(report.cost - ledger.cost) < 1e-9
    gemini, gpt = _map_prices("gemini/gemini-2.5-pro"), _map_prices("openai/gpt-4o")
    assert gemini and gpt
    cheap = 1_000 * gemini[0] + 100 * gemini[1] + 3_000 * gpt[0] + 300 * gpt[1]
    assert report.cost > cheap + 250_000 * gemini[0] + 2_000 * gemini[1]  # the higher tier

    batch = WriteBatch()
    batch.add(root, "usage", {"model": "openai/custom", "input_tokens": 1, "output_tokens": 1})
    await session.store.write(batch)
    report = (await session.usages.report())[root]
    assert report.unpriced == ("openai/custom",) == (await session.usages.totals(root)).unpriced
