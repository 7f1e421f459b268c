"""/forget --ids and /remember --ids with ranges (issue 13, item 2): a range means "the
messages of this agent's context whose ids fall in it" (the log's other events, command
records and usage, sit between them), costs what the context holds however wide it is,
and a single id that is not a message of the context is still an error."""

from __future__ import annotations

import json
import time

import pytest

from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.commands.parse import IdRange, parse_id_ranges
from ikigai_tui.core.handlers.context import select_ids
from tests.integration.session_helpers import ids, talk


async def _turns(session, n: int) -> tuple[str, list[int]]:
    root = session.tree.root.id
    for i in range(n):
        await talk(session, root, f"message {i}")
    return root, await ids(session, root)


async def test_a_range_takes_the_context_messages_in_it(session):
    root, before = await _turns(session, 4)
    # usage records lie between the turns: the range is not a list of message ids
    assert before != list(range(before[0], before[-1] + 1))
    out = await session.command(root, f"/forget --ids {before[2]}-{before[5]}")
    assert out.lines == ["Forgot 4 messages."]
    assert await ids(session, root) == before[:2] + before[6:]
    [filt] = [e for e in await session.store.events(root) if e.kind == "filter"]
    assert filt.payload["ids"] == before[2:6]


async def test_the_whole_log_as_a_range(session):
    root, before = await _turns(session, 3)
    out = await session.command(root, "/forget --ids 1-9000")
    assert out.lines == [f"Forgot {len(before)} messages."]
    assert await ids(session, root) == []


async def test_remember_with_ranges_and_single_ids(session):
    root, before = await _turns(session, 4)
    out = await session.command(root, f"/remember --ids {before[0]},{before[4]}-{before[7] + 50}")
    assert out.lines == ["Kept 5 messages; forgot 3."]
    assert await ids(session, root) == [before[0]] + before[4:]


@pytest.mark.serial  # a wall-clock bound (0.5 s a command)
async def test_wide_ranges_are_fast(session):
    root, before = await _turns(session, 30)
    for text in ("1-9000", "1-999999999999", "1-5,7-9000000,3-99999999999999"):
        started = time.perf_counter()
        out = await session.command(root, f"/forget --dry-run --ids {text}")
        assert time.perf_counter() - started < 0.5, text
        assert out.lines[0].startswith(f"Would forget {len(before)} messages")


@pytest.mark.parametrize("make, expected", [
    (lambda b: "9999", "not in this agent's context: 9999"),
    (lambda b: f"{b[0]},9999", "not in this agent's context: 9999"),
    (lambda b: "5000-9000", "no message of this agent's context has an id in 5000-9000"),
    (lambda b: f"{b[0]}-{b[-1]},7000-8000", "has an id in 7000-8000"),
])
async def test_bad_parts_are_errors_and_write_nothing(session, make, expected):
    root, before = await _turns(session, 2)
    count = await session.store.count_events()
    with pytest.raises(CommandError, match=expected):
        await session.command(root, f"/forget --ids {make(before)}")
    assert await session.store.count_events() == count
    assert await ids(session, root) == before


async def test_a_single_id_of_a_forgotten_message_is_an_error(session):
    root, before = await _turns(session, 2)
    await session.command(root, f"/forget --ids {before[0]}")
    with pytest.raises(CommandError, match=f"not in this agent's context: {before[0]}"):
        await session.command(root, f"/forget --ids {before[0]}")
    # ... while a range over it takes what is still there
    out = await session.command(root, f"/forget --ids {before[0]}-{before[1]}")
    assert out.lines == ["Forgot 1 message."]


@pytest.mark.serial  # a wall-clock bound (50 ms)
def test_ranges_are_never_expanded():
    assert parse_id_ranges("3,5-9") == [IdRange(3, 3), IdRange(5, 9)]
    assert str(IdRange(5, 9)) == "5-9" and str(IdRange(3, 3)) == "3"
    ctx = {i: None for i in (2, 4, 6, 1_000_000)}
    started = time.perf_counter()
    assert select_ids(parse_id_ranges("1-999999999999999999"), ctx) == [2, 4, 6, 1_000_000]
    assert select_ids(parse_id_ranges("6,1-4"), ctx) == [6, 2, 4]
    assert time.perf_counter() - started < 0.05


def test_run_forgets_a_range_and_reports_a_bad_id(ikigai, tmp_path):
    db = tmp_path / "r.db"
    script = tmp_path / "s.txt"
    script.write_text("one\ntwo\nthree\n/forget --ids 1-9000\n")
    done = ikigai("--db", str(db), "run", "--script", str(script))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "Forgot 6 messages."
    ctx = json.loads(ikigai("--db", str(db), "context", "--json").stdout)
    assert ctx["messages"] == []
    script.write_text("four\n/forget --ids 1\n")
    done = ikigai("--db", str(db), "run", "--script", str(script))
    assert done.returncode == 1
    assert done.stderr.strip().startswith("Error: not in this agent's context: 1.")
    assert len(done.stderr.strip().splitlines()) == 1
