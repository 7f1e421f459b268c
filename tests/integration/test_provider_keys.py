"""A provider key that is not set (issue 13, item 11): one clear line at once, naming the
variable to set; never retried, never cut in the middle of a word; a message is refused
before it is written, so it stays with the user. Once per wire format, through real
litellm against the loopback fake."""

from __future__ import annotations

import asyncio

import pytest

from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.notices import ErrorNotice, RetryNotice, TurnFinished
from ikigai_tui.llm.errors import classify, one_line
from ikigai_tui.llm.litellm_import import import_litellm
from tests.fakes.server import Reply
from tests.integration.provider_helpers import KEY_VARIABLES, MODELS, base_for

ALTERNATIVES = {"anthropic": "ANTHROPIC_AUTH_TOKEN", "gemini": "GOOGLE_API_KEY"}


def _unset(monkeypatch, fmt: str) -> str:
    variable = KEY_VARIABLES[fmt]
    monkeypatch.delenv(variable, raising=False)
    if fmt in ALTERNATIVES:
        monkeypatch.delenv(ALTERNATIVES[fmt], raising=False)
    return variable


async def test_a_message_is_refused_before_it_is_written(h, fmt, monkeypatch):
    variable = _unset(monkeypatch, fmt)
    with pytest.raises(CommandError) as caught:
        await h.say("hello")
    message = str(caught.value)
    assert message.startswith(f"{variable} is not set") and h.model in message
    assert "/model" in message and "\n" not in message
    assert await h.events(h.root, "user") == []
    assert h.fake.requests == []
    assert h.session.tree[h.root].status == "idle"


async def test_a_turn_without_its_key_fails_at_once_without_retries(h, fmt, monkeypatch):
    """A child forked with a prompt starts its own turn: no say() to refuse it."""
    h.fake.queue(Reply(text="first answer"))
    assert await h.say("first")
    variable = _unset(monkeypatch, fmt)
    h.notices.clear()
    await h.session.command(h.root, "/fork --name kid do the thing")
    kid = h.session.tree.resolve("kid")
    assert kid.task is not None
    assert await asyncio.wait_for(kid.task, 5) is False
    errors = [n for n in h.of(ErrorNotice) if n.agent_id == kid.id]
    assert len(errors) == 1, errors
    assert errors[0].message.startswith(f"{variable} is not set")
    assert h.of(RetryNotice) == []
    assert len(h.fake.requests) == 1  # only the first turn's
    assert [t.ok for t in h.of(TurnFinished) if t.agent_id == kid.id] == [False]


async def test_a_missing_key_from_litellm_is_not_worth_retrying(fake, fmt, monkeypatch):
    """What litellm raises with no key (a 500 for OpenAI, a connection error for Gemini)
    is sorted as a missing key: not retried, the variable named whole."""
    variable = _unset(monkeypatch, fmt)
    litellm = await asyncio.to_thread(import_litellm)
    with pytest.raises(Exception) as caught:
        await litellm.acompletion(model=MODELS[fmt], api_base=base_for(fake, fmt),
                                  messages=[{"role": "user", "content": "hi"}],
                                  num_retries=0, max_retries=0)
    failure = classify(caught.value, MODELS[fmt], 10)
    assert failure.retryable is False
    assert failure.message.startswith(f"{variable} is not set")
    assert fake.requests == []


def test_one_line_cuts_between_words():
    text = ("openai failed (500): Missing credentials. Please pass an `api_key`, or set "
            "the `OPENAI_API_KEY` or `OPENAI_ADMIN_KEY` environment variable.")
    for limit in range(40, len(text)):
        shown = one_line(text, limit)
        assert len(shown) <= limit and shown.endswith("…")
        kept = shown[:-1]
        assert text.startswith(kept)
        assert text[len(kept)] in " ,.;:-", (limit, shown)  # the cut falls between words
    assert one_line(text, len(text)) == text
    assert one_line("x" * 50, 20) == "x" * 19 + "…"  # one long word: cut, as nothing else can


def test_run_after_switching_to_a_model_without_its_key(ikigai, tmp_path):
    """`/model openai/gpt-4o` with no OPENAI_API_KEY, then a message: one line, at once."""
    db = tmp_path / "k.db"
    done = ikigai("--db", str(db), "run", input="/model openai/gpt-4o\nhello\n", timeout=30)
    assert done.returncode == 1
    assert done.stdout.splitlines() == [  # said at /model time too (issue 23, item 10)
        "Model set to openai/gpt-4o.",
        "Warning: OPENAI_API_KEY is not set: messages to openai/gpt-4o will fail until it is."]
    assert done.stderr.splitlines() == [
        "Error: OPENAI_API_KEY is not set: set it to use openai/gpt-4o, or switch with "
        "/model (offline works with no key)"]
    log = ikigai("--db", str(db), "log").stdout
    assert " user: " not in log and "Retrying" not in done.stderr
