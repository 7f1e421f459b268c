"""The context service (issue 11): one plan of the next request serves the gauge, the
reports and the turn, and the request's serialisation is the one that is counted."""

from __future__ import annotations

import pytest

from ikigai_tui.core.tokens import limits
from ikigai_tui.core.events import WriteBatch
from ikigai_tui.core.provider import Request
from ikigai_tui.core.replay.replayer import Replayer
from ikigai_tui.core.replay.request import build_messages, entry_message, message_texts
from ikigai_tui.core.tokens.counter import TokenCounter, message_segments
from tests.unit.window_helpers import chat


async def test_plan_holds_what_the_turn_sends(sessions, monkeypatch):
    session = await sessions(budget=2_000)
    root = session.tree.root.id
    await chat(session, 12)
    seen: list[Request] = []
    offline = session.providers.get("offline")
    real = type(offline).stream

    def spy(self, request):
        seen.append(request)
        return real(self, request)

    monkeypatch.setattr(type(offline), "stream", spy)
    plan = await session.plan(root, messages=True)
    assert plan.window.pruned_turns > 0 and plan.tokens <= plan.budget
    r = await session.replayer(root)  # outlines: the window's text read from the log
    full = await session.bodies.entries(r, plan.window_ids)
    assert plan.messages == build_messages(r, plan.window_ids, full)
    assert all(m["content"] for m in plan.messages)
    assert plan.state == plan.window.state and plan.limit == plan.window.limit
    # Without messages asked for, the plan is the same but carries none (the gauge's).
    light = await session.plan(root)
    assert light.messages is None and light.window_ids == plan.window_ids
    assert light.window == plan.window
    # The turn runs on a plan made the same way: what it sends is the plan's request.
    await session.commit(_user(root, "one more"))
    expected = await session.plan(root, messages=True)
    assert await session.start_turn(root)
    assert seen[0] == expected.request()


def _user(agent_id: str, text: str) -> WriteBatch:
    batch = WriteBatch()
    batch.add(agent_id, "user", {"content": text})
    return batch


@pytest.mark.parametrize("kind,payload", [
    ("user", {"content": "hello"}),
    ("assistant", {"content": "hi there"}),
    ("tool_call", {"call_id": "c1", "name": "slash", "arguments": '{"command": "mark"}'}),
    ("tool_call", {"call_id": "c2", "name": "slash", "arguments": ""}),
    ("tool_result", {"call_id": "c1", "call_event": 3, "content": "OK"}),
    ("summary", {"content": "we talked"}),
])
def test_counted_texts_are_the_sent_texts(kind, payload):
    """The counter counts the message the request holds, field for field."""
    sent = entry_message(kind, payload)
    assert message_segments(kind, payload) == message_texts(sent)
    texts = [sent["role"], sent.get("content") or ""]
    for call in sent.get("tool_calls") or ():
        texts += [call["function"]["name"], call["function"]["arguments"]]
    assert list(message_segments(kind, payload)) == texts


def test_an_empty_call_is_counted_as_the_arguments_sent():
    rows = [(1, "user", {"content": "go"}),
            (2, "tool_call", {"call_id": "c", "name": "slash", "arguments": ""}),
            (3, "tool_result", {"call_id": "c", "call_event": 2, "content": "OK"})]
    sent = build_messages(Replayer.from_rows([(i, k, p) for i, k, p in rows]))
    assert sent[1]["tool_calls"][0]["function"]["arguments"] == "{}"
    counter = TokenCounter("anthropic/x")
    assert counter.message("tool_call", rows[1][2]) == counter.message(
        "tool_call", {**rows[1][2], "arguments": "{}"})


def test_one_home_for_the_shared_numbers():
    from ikigai_tui import config
    from ikigai_tui.core import provider, session_settings
    from ikigai_tui.core.tokens import window
    from ikigai_tui.llm import models
    assert config.DEFAULT_BUDGET is session_settings.DEFAULT_BUDGET is limits.DEFAULT_BUDGET
    assert provider.Limits is limits.Limits
    assert type(models.model_limits("offline")) is limits.Limits
    assert window.usage_state is limits.usage_state


@pytest.mark.parametrize("percent,state", [(0, "normal"), (79.9, "normal"), (80, "warning"),
                                           (94.9, "warning"), (95, "critical"), (100, "full")])
def test_tree_and_gauge_share_the_thresholds(percent, state):
    from rich.style import Style

    from ikigai_tui.tui.widgets.agent_tree import TreeStyles, _usage_style
    assert limits.usage_state(percent / 100) == state
    marked = TreeStyles(*(Style(meta={"field": name}) for name in TreeStyles._fields))
    by_state = {"normal": marked.normal, "warning": marked.warning,
                "critical": marked.critical, "full": marked.critical}
    assert _usage_style(percent, marked) is by_state[state]


async def test_the_tools_are_serialised_once_per_tool_set(sessions, monkeypatch):
    """Every plan counts the tool definitions: their JSON is made once per tool list, and
    made again when the tools change."""
    from ikigai_tui.core import tools
    from ikigai_tui.core.tokens import counter as tokens

    made: list[list[str]] = []
    serialise = tokens.serialise_tools

    def counted(schemas):
        made.append([s["function"]["name"] for s in schemas])
        return serialise(schemas)

    monkeypatch.setattr(tokens, "serialise_tools", counted)
    monkeypatch.setattr(tokens, "_tools_texts", {})
    session = await sessions()
    root = session.tree.root.id
    await chat(session, 3)
    for _ in range(3):
        await session.plan(root, messages=True)
    assert len(made) == 1
    before = (await session.plan(root)).window.tools

    class Extra:
        name = "extra"
        callers = frozenset({tools.TURN})

        def schema(self):
            return {"type": "function", "function": {"name": "extra", "description": "x" * 400,
                                                     "parameters": {"type": "object"}}}

    monkeypatch.setattr(tools, "_tools", tools.ToolRegistry([*tools.registry(), Extra()]))
    after = await session.plan(root)
    assert len(made) == 2 and made[-1][-1] == "extra"
    assert after.window.tools > before  # the new tool is counted
    await session.plan(root)
    assert len(made) == 2


def test_a_tool_list_changed_in_place_is_serialised_again():
    from ikigai_tui.core.tokens.counter import tools_text

    schemas = [{"type": "function", "function": {"name": "one"}}]
    first = tools_text(schemas)
    assert tools_text(schemas) is first
    schemas.append({"type": "function", "function": {"name": "two"}})
    assert '"two"' in tools_text(schemas)
    schemas[1] = {"type": "function", "function": {"name": "three"}}
    assert '"three"' in tools_text(schemas) and '"two"' not in tools_text(schemas)
    assert tools_text([]) == ""
