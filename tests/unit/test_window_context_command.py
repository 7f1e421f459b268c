"""The sliding window as the user sees it (SPEC §7): the eight lines of `/context` parsed
and checked against the Session's meter (tokens, limit, state, breakdown, budget, window
start; estimated and exact counts), with the window off, with nothing pruned, and the
`context --json` data.
"""

from __future__ import annotations

import json
import re

from ikigai_tui.cli.output import context_data
from ikigai_tui.core.events import WriteBatch
from ikigai_tui.core.tokens.limits import format_percent, format_tokens
from ikigai_tui.core.tokens.counter import TokenCounter
from tests.unit.window_helpers import chat, talk


def _num(text: str) -> int:
    if text.endswith("K"):
        return round(float(text[:-1]) * 1000)
    return int(text.replace(",", ""))


_BREAKDOWN = [
    r"  system prompt +(?P<system>[\d,]+)(?:  \(of which (?P<npins>\d+) pins: (?P<pins>[\d,]+)\))?",
    r"  tools +(?P<tools>[\d,]+)",
    r"  summaries +(?P<summaries>[\d,]+)(?:  \((?P<nsummaries>\d+) summar(?:y|ies)\))?",
    r"  window +(?P<window>[\d,]+)  \((?P<nwindow>[\d,]+) messages\)",
    r"  outside window +(?P<outside>[\d,]+)  \((?P<noutside>[\d,]+) messages, (?P<pruned>-?[\d,]+) "
    r"pruned turns?; not sent\)",
    r"  history +(?P<history>[\d,]+)  \(sent \+ outside window\)",
    r"Window: (?P<budget>[\d,]+ tokens|off \(sliding window disabled\)); starts at "
    r"(?P<start>message \d+|empty)",
    r"Workspace: (?P<workspace>/.*) \((?P<workspace_source>[a-z /-]+)\)",
    r"Usage so far: (?P<used_in>[\d,]+) tokens in, (?P<used_out>[\d,]+) out; cost (?P<cost>\S.*)",
]


def parse_context(lines: list[str]) -> dict:
    """The ten lines, then, with pins, one line for each (checked by the callers). A
    "History:" block (issue 28: after a compaction, a restore, a change the LLM asked for)
    comes before the usage line; its own test is tests/integration/test_history.py."""
    if "History:" in lines:
        at = lines.index("History:")
        end = at + 1
        while end < len(lines) and lines[end].startswith("  "):
            end += 1
        lines = lines[:at] + lines[end:]
    pins = lines[10:]
    assert len(lines) == 10 or pins[0] == "Pins (always sent, never pruned nor compacted):", lines
    lines = lines[:10]
    head = re.fullmatch(r"Sent: (?P<approx>~?)(?P<tokens>[\d.]+[KM]?)"
                        r"(?: of (?P<window_budget>[\d.]+[KM]?) window)? · "
                        r"(?P<percent>\d+)% of (?P<limit>[\d.]+[KM]?)(?P<off> · window off)?, "
                        r"(?P<state>normal|warning|critical|full); "
                        r"counts (?P<kind>estimated|exact) for (?P<model>\S+)", lines[0])
    assert head, lines[0]
    out = dict(head.groupdict())
    for pattern, line in zip(_BREAKDOWN, lines[1:]):
        found = re.fullmatch(pattern, line)
        assert found, (pattern, line)
        out.update({k: v for k, v in found.groupdict().items() if v is not None})
    return out


async def test_context_command_reports_the_window(sessions):
    session = await sessions(budget=1_500)
    root = session.tree.root.id
    await chat(session, 8)
    await session.command(root, "/pin always answer briefly")
    await talk(session, root, "after the pin")
    result = await session.command(root, "/context")
    w = result.data
    assert w == await session.measure(root)
    shown = parse_context(result.lines)

    r = await session.replayer(root)
    full = await session.bodies.entries(r, list(r.ctx))  # with the text (r holds outlines)
    meter = session.meter(session.tree[root])
    window = meter.window_ids()
    outside = [k for k in r.ctx if k not in set(window)]
    assert outside and window, "the budget should have pruned some turns"

    # Rounded as the gauge rounds them (issue 13): the same figures on both.
    assert shown["tokens"] == format_tokens(w.tokens) and w.tokens < 10_000
    assert shown["approx"] == "~" and shown["window_budget"] == "1.5K" and not shown["off"]
    assert shown["limit"] == "200K" and w.limit == 200_000
    assert shown["percent"] + "%" == format_percent(100 * w.tokens / 200_000)
    assert shown["state"] == w.state == "normal"
    assert (shown["kind"], shown["model"]) == ("estimated", "offline")
    assert shown["npins"] == "1" and _num(shown["pins"]) == w.pins > 0
    # Each pin is listed with its tokens, after the eight lines.
    assert result.lines[10:] == ["Pins (always sent, never pruned nor compacted):",
                                f"  1. {w.pins:>9,}  always answer briefly"]
    assert _num(shown["system"]) == w.system > w.pins
    assert _num(shown["tools"]) == w.tools > 0
    # None: no "(0)" after the 0 (issue 23 review, item 10: what was "(0)"?).
    assert _num(shown["summaries"]) == 0 and "nsummaries" not in shown
    assert result.lines[3] == f"  summaries      {0:>9,}"
    assert _num(shown["window"]) == w.window and _num(shown["nwindow"]) == len(window)
    assert _num(shown["outside"]) == w.outside > 0
    assert _num(shown["history"]) == w.tokens + w.outside  # sent + pruned: what auto-compaction measures
    assert _num(shown["noutside"]) == len(outside)
    users_outside = [k for k in outside if r.ctx[k][1] == "user"]
    assert _num(shown["pruned"]) == w.pruned_turns == len(users_outside) > 0
    usage = await session.usages.totals(root)
    assert (_num(shown["used_in"]), _num(shown["used_out"])) == (
        usage.input_tokens, usage.output_tokens)
    assert usage.input_tokens > w.tokens and shown["cost"] == "$0"  # nine turns, offline
    assert shown["budget"] == "1,500 tokens" and w.budget == 1_500
    assert shown["start"] == f"message {window[0]}" and r.ctx[window[0]][1] == "user"
    # The figures are the counter's own, scaled by the learned factor.
    counter = meter.counter
    window_raw = sum(counter.message(full[k][1], full[k][2]) for k in window)
    assert abs(w.window - counter.scale(window_raw)) <= 1  # a running total's part: see below
    assert w.tokens <= 1_500
    assert w.system + w.tools + w.summaries + w.window == w.tokens  # the rows add up

    # A summary is outside the window and always counted.
    batch = WriteBatch()
    batch.add(root, "compact", {"ids": outside[:4], "summary": "we said hello " * 20})
    await session.commit(batch)
    after = parse_context((await session.command(root, "/context")).lines)
    assert after["nsummaries"] == "1" and _num(after["summaries"]) > 0
    assert "  (1 summary)" in (await session.command(root, "/context")).lines[3]

    # Exact counts for an OpenAI model.
    await session.command(root, "/model openai/gpt-4o")
    exact = await session.command(root, "/context")
    shown = parse_context(exact.lines)
    assert (shown["kind"], shown["model"]) == ("exact", "openai/gpt-4o")
    assert exact.data.exact and _num(shown["limit"]) == exact.data.limit
    gpt = TokenCounter("openai/gpt-4o")
    window = session.meter(session.tree[root]).window_ids()
    assert exact.data.window == sum(gpt.message(full[k][1], full[k][2]) for k in window)


async def test_context_command_with_the_window_off(sessions):
    session = await sessions(budget=0)
    root = session.tree.root.id
    await chat(session, 5, size=2_000)
    result = await session.command(root, "/context")
    shown = parse_context(result.lines)
    r = await session.replayer(root)
    assert shown["budget"] == "off (sliding window disabled)"
    assert shown["off"] and shown["window_budget"] is None
    assert shown["start"] == f"message {next(iter(r.ctx))}"
    assert (shown["outside"], shown["noutside"], shown["pruned"]) == ("0", "0", "0")
    assert _num(shown["nwindow"]) == len(r.ctx) == 10
    await session.command(root, "/clear")
    shown = parse_context((await session.command(root, "/context")).lines)
    assert shown["start"] == "empty" and shown["nwindow"] == "0"


async def test_no_turn_is_pruned_while_everything_fits(sessions):
    """The everyday case: a new conversation under the default budget prunes nothing,
    and says so (0 pruned turns, never a negative count)."""
    session = await sessions()
    root = session.tree.root
    shown = parse_context((await session.command(root.id, "/context")).lines)
    assert (shown["start"], shown["pruned"]) == ("empty", "0")
    await chat(session, 2)
    result = await session.command(root.id, "/context")
    shown = parse_context(result.lines)
    assert (shown["outside"], shown["noutside"]) == ("0", "0")
    assert shown["pruned"] == "0"
    assert result.data.pruned_turns == 0
    assert (await context_data(session, root))["pruned_turns"] == 0


async def test_context_json_matches_the_meter(sessions):
    session = await sessions(budget=1_800)
    root = session.tree.root
    await chat(session, 8)
    data = await context_data(session, root)
    json.dumps(data)  # serializable as `context --json` prints it
    w = await session.measure(root.id)
    meter = session.meter(root)
    window = meter.window_ids()
    assert data["tokens"] == w.tokens
    assert data["budget"] == w.budget == 1_800
    assert data["limit"] == 200_000 and data["estimated"] is True
    assert data["window_start"] == w.start == window[0]
    assert data["pruned_turns"] == w.pruned_turns > 0
    assert data["breakdown"]["outside"] == w.outside > 0
    flags = [m["in_window"] for m in data["messages"]]
    inside = [m["id"] for m in data["messages"] if m["in_window"]]
    assert inside == window
    assert flags == sorted(flags)  # a prefix outside, the rest inside
    assert data["messages"][flags.index(True)]["id"] == data["window_start"]
    assert data["messages"][flags.index(True)]["role"] == "user"
    users_outside = [m for m in data["messages"] if not m["in_window"] and m["role"] == "user"]
    assert len(users_outside) == data["pruned_turns"]
    assert data["tokens"] <= data["budget"]


# -- one rounding for the gauge, the tree and /context (issue 13, item 3) ---------------


def test_format_percent_floors_but_never_reads_zero_for_some_usage():
    from ikigai_tui.core.tokens.limits import format_percent

    assert [format_percent(p) for p in (0, 0.01, 0.95, 1.0, 79.99, 80.0, 94.9, 100.0, 160.4)] == [
        "0%", "1%", "1%", "1%", "79%", "80%", "94%", "100%", "160%"]
    assert format_percent(float("nan")) == "?"


def test_sent_text_shows_the_window_and_the_model_limit():
    from ikigai_tui.core.tokens.words import sent_text

    assert sent_text(1_950, 200_000, 2_000, exact=False) == "~1.9K of 2K window · 1% of 200K"
    assert sent_text(2_000, 200_000, 2_000) == "2K of 2K window · 1% of 200K"
    assert sent_text(80_000, 200_000, 0) == "80K · 40% of 200K · window off"
