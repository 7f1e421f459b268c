"""The context-full check counts the message being sent (issue 13, item 14): a message
that cannot fit the model's input limit, even with the window leaving every earlier turn
out, is refused before it is written, with a line saying by how much; one that fits the
limit is sent, however far over the budget (the window makes room)."""

from __future__ import annotations

import re

import pytest

from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.tokens.limits import format_tokens
from ikigai_tui.core.provider import Limits
from tests.conftest import run_ikigai
from tests.unit.window_helpers import chat, talk

LIMIT = 3_000


def _limit(session, monkeypatch, limit: int = LIMIT) -> None:
    monkeypatch.setattr(session.providers, "limits",
                        lambda model: Limits(input=limit, reserve=0, known=True))


def _over(message: str) -> int:
    """The '~N over' figure of the refusal, in tokens."""
    found = re.search(r"~([\d.]+)(K?) over", message)
    assert found, message
    return round(float(found.group(1)) * (1000 if found.group(2) else 1))


async def test_a_message_that_cannot_fit_is_refused_before_it_is_written(sessions, monkeypatch):
    session = await sessions(budget=1_000)
    root = session.tree.root.id
    await chat(session, 4, size=600)  # a history the window would leave out
    _limit(session, monkeypatch)
    count = await session.store.count_events()
    fixed = await session.measure(root)
    fixed_tokens = fixed.system + fixed.tools + fixed.summaries
    text = "lorem ipsum " * 2_000  # far more than the limit on its own
    with pytest.raises(CommandError) as raised:
        await session.say(root, text)
    message = str(raised.value)
    assert message.startswith("message too long for offline:")
    assert "all earlier messages left out" in message and "Shorten it by" in message
    assert "\n" not in message
    counter = session.meter(session.tree[root]).counter
    expected = fixed_tokens + counter.scale(counter.message("user", {"content": text})) - LIMIT
    # The message shows the figure as format_tokens does (1,000 to 9,999: floored to a
    # hundred), so it may read up to 99 under the count, besides the 2% estimate margin.
    shown = round(float(format_tokens(expected).removesuffix("K")) * 1000) if (
        1_000 <= expected < 10_000) else expected
    assert shown == _over(message) or abs(_over(message) - expected) <= max(50, expected // 50), (
        message, expected)
    assert f"{format_tokens(LIMIT)} input limit" in message
    assert await session.store.count_events() == count  # nothing written
    assert session.tree[root].task is None or session.tree[root].task.done()


async def test_a_message_over_the_budget_but_within_the_limit_is_sent(sessions, monkeypatch):
    """The window prunes everything else: the message alone fits, so it goes."""
    session = await sessions(budget=1_000)
    root = session.tree.root.id
    await chat(session, 4, size=600)
    _limit(session, monkeypatch)
    w = await session.measure(root)
    room = LIMIT - (w.system + w.tools + w.summaries)
    await talk(session, root, "x" * ((room - 200) * 4))  # ~room-200 tokens: over the budget
    r = await session.replayer(root)
    assert [e[1] for e in r.ctx.values()][-2:] == ["user", "assistant"]


async def test_with_the_window_off_the_whole_context_counts(sessions, monkeypatch):
    session = await sessions(budget=0)
    root = session.tree.root.id
    await chat(session, 4, size=600)
    used = (await session.measure(root)).tokens
    _limit(session, monkeypatch, used + 300)
    count = await session.store.count_events()
    with pytest.raises(CommandError) as raised:
        await session.say(root, "y" * 2_400)  # ~600 tokens: 300 too many
    message = str(raised.value)
    assert "the window is off; /clear makes room" in message
    assert 250 <= _over(message) <= 350, message
    assert await session.store.count_events() == count
    await talk(session, root, "short")  # a message that fits still goes


def test_a_200000_word_message_is_refused_by_run(tmp_path):
    """The reported case: 200,000 words, committed and sent at 160% of the limit."""
    db = tmp_path / "big.db"
    script = tmp_path / "script.txt"
    script.write_text("hello\n" + "word " * 200_000 + "\nstill here\n")
    done = run_ikigai("--db", str(db), "run", "--script", str(script), timeout=120)
    assert done.returncode == 1
    errors = done.stderr.splitlines()
    assert len(errors) == 1 and errors[0].startswith("Error: message too long for offline"), errors
    assert "over its 200K input limit" in errors[0]
    assert done.stdout.count("Offline model here.") == 2  # the lines before and after
    log = run_ikigai("--db", str(db), "log").stdout
    assert "word word" not in log
