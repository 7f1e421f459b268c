"""The conversational /forget (SPEC §8, seed 000): the LLM previews with filter_context,
the user agrees, the LLM applies; the planning conversation leaves with the filtered ids."""

from __future__ import annotations

import json

import pytest

from ikigai_tui.core.commands.parse import parse_id_list
from tests.fakes.server import Reply
from tests.integration.matcher_helpers import Responder, write_exchanges

pytestmark = pytest.mark.parametrize("fmt", ["openai"], indirect=True)


def matcher_only(responder):
    """Answer the matcher's side requests; let the turn's requests take the queue."""
    def answer(received):
        return responder(received) if "report_matches" in json.dumps(received.body) else None
    return answer


def tool(action, mode, **more):
    return Reply(tool_calls=[("filter_context", {"action": action, "mode": mode, **more})])


async def test_preview_then_apply_removes_the_matches_and_the_planning_conversation(make, fake, fmt):
    h = await make()
    topic_of = await write_exchanges(h, ["schema", "weather", "schema", "music"])
    fake.respond(matcher_only(Responder(topic_of, "schema")))
    fake.queue(tool("preview", "forget", criteria="database schema"), Reply(text="Found 4. Proceed?"))
    await h.say("Forget the database schema discussions; show me first.")
    preview = next(e for e in await h.events(kind="tool_result"))
    found = json.loads(preview.payload["content"])
    schema = sorted(i for i, t in topic_of.items() if t == "schema")
    assert [m["id"] for m in found["matching_messages"]] == schema
    assert found["message_count"] == 4 and found["token_estimate"] > 0
    assert len(await h.events(kind="filter")) == 0  # a preview writes nothing

    fake.queue(tool("apply", "forget", message_ids=schema), Reply(text="Done."))
    await h.say("Yes, proceed.")
    (event,) = await h.events(kind="filter")
    planning = event.payload["planning"]
    ctx = await h.context()
    kept = [i for i, _k, _p in ctx]
    # The event keeps the command it stands for and the context's size before and after.
    command = event.payload["command"]
    assert command.startswith("/forget --ids ") and parse_id_list(command.split()[-1]) == schema
    assert event.payload["after"]["messages"] == (event.payload["before"]["messages"]
                                                  - len(schema) - len(planning))
    # The other topics stay; nothing of the planning, nor the LLM's closing reply.
    assert kept == sorted(i for i, t in topic_of.items() if t != "schema")
    assert not [p for _i, k, p in ctx if k == "assistant" and p.get("content") == "Done."]
    # The event keeps the criteria the LLM previewed with, and the matcher that found them.
    assert event.payload["criteria"] == "database schema"
    assert event.payload["matcher"] == found["matcher"]
    assert not set(planning) & set(kept) and not set(schema) & set(kept)
    users = [p["content"] for _i, k, p in ctx if k == "user"]
    assert not any("Forget the database" in u or "proceed" in u for u in users)
    # The apply's tool result is gone with its call.
    assert not [k for _i, k, _p in ctx if k in ("tool_call", "tool_result")]


async def test_apply_is_deferred_to_the_turn_end_and_undo_brings_everything_back(make, fake, fmt):
    h = await make()
    topic_of = await write_exchanges(h, ["schema", "weather"])
    before = [i for i, _k, _p in await h.context()]
    schema = sorted(i for i, t in topic_of.items() if t == "schema")
    fake.queue(tool("apply", "forget", message_ids=schema), Reply(text="Done."))
    await h.say("Drop the schema part.")
    result = next(e for e in await h.events(kind="tool_result"))
    assert "applied when this turn ends" in result.payload["content"]
    ids = [i for i, _k, _p in await h.context()]
    assert ids == sorted(i for i, t in topic_of.items() if t == "weather")  # "Done." too left
    await h.session.command(h.root, "/undo")
    restored = [i for i, _k, _p in await h.context()]
    assert restored[:len(before)] == before and len(restored) == len(before) + 4


async def test_remember_through_the_tool_keeps_only_the_ids_and_drops_the_planning(make, fake, fmt):
    h = await make()
    topic_of = await write_exchanges(h, ["schema", "weather", "music"])
    weather = sorted(i for i, t in topic_of.items() if t == "weather")
    fake.queue(tool("apply", "remember", message_ids=weather), Reply(text="Kept the weather."))
    await h.say("Keep only the weather talk.")
    assert [i for i, _k, _p in await h.context()] == weather


@pytest.mark.parametrize("arguments, error", [
    ({"action": "apply", "mode": "forget", "message_ids": [99999]}, "not in your context"),
    ({"action": "apply", "mode": "forget", "message_ids": []}, "non-empty list"),
    ({"action": "preview", "mode": "forget"}, "needs the criteria"),
    ({"action": "zap", "mode": "forget"}, "action must be"),
    ({"action": "preview", "mode": "sideways", "criteria": "x"}, "mode must be"),
])
async def test_bad_calls_are_error_results_and_change_nothing(make, fake, fmt, arguments, error):
    h = await make()
    await write_exchanges(h, ["schema"])
    fake.queue(Reply(tool_calls=[("filter_context", arguments)]), Reply(text="Sorry."))
    await h.say("Try it.")
    result = next(e for e in await h.events(kind="tool_result"))
    assert result.payload["is_error"] and error in result.payload["content"]
    assert await h.events(kind="filter") == []
