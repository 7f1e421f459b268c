"""The window and the token counts as providers see them (SPEC §7): a real Session, real
litellm, the loopback fake. The fake records every request body, so these tests check
that what is sent is exactly the window, and learn from the usage the fake reports."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from ikigai_tui.cli.output import context_data
from ikigai_tui.core.replay.request import system_text
from ikigai_tui.core.session import Session, SessionSettings
from ikigai_tui.store.sqlite.store import Store
from ikigai_tui.core.tokens.counter import TokenCounter
from ikigai_tui.core.tools import tool_schemas
from ikigai_tui.llm.providers import Providers
from tests.fakes.server import FakeProvider, Received, Reply, validate_pairs
from tests.integration.provider_helpers import text_of

SECRET = "test-key"
ANTHROPIC = "anthropic/claude-sonnet-4-5"
OPENAI = "openai/gpt-4o"


@pytest.fixture(autouse=True)
def keys(monkeypatch):
    for variable in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.setenv(variable, SECRET)


class Spy:
    """Stands between the session and the real provider: at the moment a request is
    streamed it records the request, the app's view of the context, and can queue the
    fake's reply for that very request."""

    def __init__(self, session: Session, fake: FakeProvider, inner: Any, log: list) -> None:
        self.session, self.fake, self.inner, self.log = session, fake, inner, log
        self.model, self.offline = inner.model, inner.offline

    async def stream(self, request):
        session = self.session
        agent = session.tree.root
        replayer = await session.replayer(agent.id)
        seen = {
            "request": request,
            "context": await context_data(session, agent),
            "measured": await session.measure(agent.id),
            "raw": session.meter(agent).raw_request(replayer, tool_schemas()),
        }
        reply = self.log_reply(seen)
        if reply is not None:
            self.fake.queue(reply)
        self.log.append(seen)
        async for item in self.inner.stream(request):
            yield item

    log_reply = staticmethod(lambda seen: None)


class App:
    def __init__(self, fake: FakeProvider, path, model: str, budget: int) -> None:
        self.fake, self.path, self.model, self.budget = fake, path, model, budget
        self.seen: list[dict] = []
        self.reply_for = None
        self.closed = False

    async def open(self) -> App:
        base = self.fake.openai_base if self.model.startswith("openai/") else self.fake.base_url
        self.store = await Store.open(self.path)
        providers = Providers(api_base=base, timeout=5, max_retries=0, retry_base_delay=0.01)
        self.session = await Session.open(self.store, providers,
                                          SessionSettings(model=self.model, budget=self.budget))
        real_get = providers.get

        def get(model):
            spy = Spy(self.session, self.fake, real_get(model), self.seen)
            if self.reply_for is not None:
                spy.log_reply = self.reply_for
            return spy

        providers.get = get
        return self

    async def close(self) -> None:
        if not self.closed:
            self.closed = True
            await self.session.close()
            await self.store.close()

    @property
    def root(self):
        return self.session.tree.root

    async def say(self, text: str) -> None:
        task = await self.session.say(self.root.id, text)
        assert await asyncio.wait_for(task, 20), [e.payload for e in await self.store.events()
                                                  if e.kind == "error"]


@pytest.fixture
async def apps(fake, tmp_path):
    opened: list[App] = []

    async def open_(model: str, budget: int = 100_000) -> App:
        app = await App(fake, tmp_path / "w.db", model, budget).open()
        opened.append(app)
        return app

    yield open_
    for app in opened:
        await app.close()


# -- flattening a request and a window to comparable items ---------------------------------


def sent_items(rec: Received) -> list[tuple]:
    """The conversation of a request body (no system prompt), one item per text, tool call
    or tool result, in order."""
    out: list[tuple] = []
    if rec.format == "openai":
        for m in rec.body["messages"]:
            if m["role"] in ("system", "developer"):
                continue
            if m["role"] == "tool":
                out.append(("tool_result", m["tool_call_id"], text_of(m.get("content"))))
                continue
            if text_of(m.get("content")):
                out.append((m["role"], text_of(m.get("content"))))
            for tc in m.get("tool_calls") or []:
                out.append(("tool_call", tc["id"], tc["function"]["name"],
                            json.loads(tc["function"]["arguments"] or "{}")))
    elif rec.format == "anthropic":
        for m in rec.body["messages"]:
            content = m["content"]
            if isinstance(content, str):
                out.append((m["role"], content))
                continue
            for b in content:
                if b.get("type") == "text":
                    out.append((m["role"], b["text"]))
                elif b.get("type") == "tool_use":
                    out.append(("tool_call", b["id"], b["name"], b["input"]))
                elif b.get("type") == "tool_result":
                    out.append(("tool_result", b["tool_use_id"], text_of(b.get("content"))))
    else:
        raise AssertionError(rec.format)
    return out


def window_items(data: dict) -> list[tuple]:
    """The same items for the messages `context --json` marks in the window."""
    out: list[tuple] = []
    for m in data["messages"]:
        if not m["in_window"]:
            continue
        if m["role"] in ("user", "assistant"):
            if m["content"]:
                out.append((m["role"], m["content"]))
        elif m["role"] == "tool_call":
            out.append(("tool_call", m["call_id"], m["name"], json.loads(m["arguments"] or "{}")))
        elif m["role"] == "tool_result":
            out.append(("tool_result", m["call_id"], m["content"]))
        else:
            raise AssertionError(m)
    return out


def _marks_call() -> tuple[str, dict]:
    return ("slash", {"command": "marks"})


@pytest.mark.parametrize("model", [OPENAI, ANTHROPIC])
async def test_the_request_holds_exactly_the_window(apps, fake, model):
    app = await apps(model, budget=1_750)  # the tools alone take ~1,150 of it (issue 25: the file tools)
    script: list[tuple[str, list]] = []
    for i in range(7):
        if i % 2 == 0:  # a tool round, then the answer
            script += [("", [_marks_call()]), (f"answer {i} " + "a" * 300, [])]
        else:
            script.append((f"short answer {i}", []))
    replies = iter(script)

    def reply(seen):  # usage as the app estimates it: the factor stays near 1
        text, calls = next(replies)
        return Reply(text=text, tool_calls=calls, usage=(max(1, round(seen["raw"])), 5))

    app.reply_for = reply
    for i in range(7):
        await app.say(f"question {i}: " + "q" * 500)

    assert len(fake.requests) == len(app.seen) == 11
    r = await app.session.replayer(app.root.id)
    for rec, seen in zip(fake.requests, app.seen):
        data = seen["context"]
        assert validate_pairs(rec) == []
        assert sent_items(rec) == window_items(data)
        first_in = next(m for m in data["messages"] if m["in_window"])
        assert first_in["id"] == data["window_start"] and first_in["role"] == "user"
        if rec.format == "openai":
            assert rec.body["messages"][0] == {"role": "system", "content": system_text(r)}
        else:
            assert text_of(rec.body["system"]) == system_text(r)

    last = app.seen[-1]["context"]
    assert last["pruned_turns"] > 0, "the budget should have pruned turns by now"
    outside = [m for m in last["messages"] if not m["in_window"]]
    sent_text = json.dumps(fake.requests[-1].body)
    for m in outside:
        if m["role"] == "user":
            assert m["content"] not in sent_text
    # The last request is the window of the context it was sent from, within budget.
    assert last["tokens"] <= last["budget"] == 1_750
    users_sent = [i for i in sent_items(fake.requests[-1]) if i[0] == "user"]
    assert users_sent[-1] == ("user", "question 6: " + "q" * 500)
    assert sent_items(fake.requests[-1])[-1][0] == "tool_result"  # the answer round of turn 6


async def test_the_factor_converges_on_reported_usage_and_survives_a_restart(apps, fake):
    ratio = 2.0
    app = await apps(ANTHROPIC)
    app.reply_for = lambda seen: Reply(text="ok " * 20, usage=(round(ratio * seen["raw"]), 7))
    for i in range(6):
        await app.say(f"turn {i}: " + "lorem ipsum dolor sit amet " * (20 + 15 * i))

    model = ANTHROPIC
    usage = [e.payload for e in await app.store.events(app.root.id) if e.kind == "usage"]
    assert len(usage) == 6
    for u, seen in zip(usage, app.seen):
        # The fake was told the app's own estimate: the log says the same.
        assert u["model"] == model
        assert u["estimated_input"] == pytest.approx(seen["raw"], abs=0.051)
        assert u["input_tokens"] / u["estimated_input"] == pytest.approx(ratio, rel=0.005)

    factor, samples = app.session.factors[model]
    assert samples == 6
    assert factor == pytest.approx(ratio, rel=0.01)
    assert (await app.store.token_factors())[model] == (factor, samples)
    assert app.session.meter(app.root).counter.factor == factor

    # Before anything is learned the shown count is the raw estimate; afterwards it is
    # what the provider reports, within 1%.
    first = app.seen[0]
    assert first["measured"].tokens == pytest.approx(first["raw"], abs=1)
    assert not first["measured"].exact
    for seen, u in list(zip(app.seen, usage))[1:]:
        assert seen["measured"].tokens == pytest.approx(u["input_tokens"], rel=0.01)

    before = await app.session.measure(app.root.id)
    raw_now = app.session.meter(app.root).raw_request(
        await app.session.replayer(app.root.id), tool_schemas())
    assert before.tokens == pytest.approx(ratio * raw_now, rel=0.01)
    await app.close()

    again = await apps(ANTHROPIC)
    assert again.session.factors[model] == (factor, samples)
    after = await again.session.measure(again.root.id)
    assert after.tokens == before.tokens
    assert after == before
    assert len(fake.requests) == 6  # measuring sent nothing


async def test_exact_models_learn_no_factor(apps, fake):
    app = await apps(OPENAI)
    for i in range(3):
        fake.queue(Reply(text=f"reply {i}", usage=(5_000 + i, 5)))  # far from the real count
        await app.say(f"question {i}: héllo 世界 " * (10 + i))

    assert OPENAI not in app.session.factors
    assert OPENAI not in await app.store.token_factors()
    counter = app.session.meter(app.root).counter
    assert counter.exact and counter.factor == 1.0
    usage = [e.payload for e in await app.store.events(app.root.id) if e.kind == "usage"]
    assert [u["input_tokens"] for u in usage] == [5_000, 5_001, 5_002]
    exact = TokenCounter(OPENAI)
    for u, seen in zip(usage, app.seen):
        w = seen["measured"]
        assert w.exact
        # The shown count is the exact count of the request sent, not the reported usage.
        assert w.tokens == u["estimated_input"] == seen["raw"]
        r_messages = seen["request"].messages
        assert w.tokens == exact.fixed(seen["request"].system, tool_schemas()) + sum(
            exact.message(m["role"], {"content": m["content"]}) for m in r_messages)
