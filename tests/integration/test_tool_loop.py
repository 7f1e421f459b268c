"""The tool loop through real litellm turns against the loopback fake provider: a reply's
tool calls run at once with their results in the calls' order (writes of one file, and
the program's own commands, one after the other), a secret a tool prints is masked in the log and in what the provider
receives, a cancel mid-command keeps the output so far flagged (and the next request
still pairs every call), and the cap on tool rounds is a setting."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest

from ikigai_tui.core.notices import ErrorNotice
from ikigai_tui.core.tools import ToolContext, ToolResult, registry
from ikigai_tui.core.tools.running import ToolSettings
from tests.conftest import run_ikigai
from tests.fakes.server import Reply, validate_pairs
from tests.integration.provider_helpers import slash
from tests.integration.tool_results_helpers import working


def bash(command: str) -> tuple[str, dict]:
    return ("bash", {"command": command})


@pytest.fixture
async def hw(make, tmp_path):
    """A harness whose agents work in tmp_path/work, every tool allowed."""
    return working(make, tmp_path)


def sent(text: str) -> str:
    """`text` as it reads inside a request body dumped to JSON."""
    return json.dumps(text)[1:-1]


async def results(h) -> list[dict]:
    return [e.payload for e in await h.events(kind="tool_result")]


async def test_two_calls_run_at_once_and_their_results_keep_the_calls_order(hw, fake, fmt):
    h = await hw()
    spans: list[tuple[float, float]] = []
    run_tool = h.session.run_tool

    async def timed(*args):
        started = time.monotonic()
        try:
            return await run_tool(*args)
        finally:
            spans.append((started, time.monotonic()))

    h.session.run_tool = timed
    fake.queue(Reply(tool_calls=[bash("sleep 0.5; echo first"), bash("sleep 0.4; echo second")]),
               Reply(text="Both done."))
    assert await h.say("Run both.")
    elapsed = max(end for _, end in spans) - min(start for start, _ in spans)
    assert elapsed < 0.9, elapsed  # one after the other would take 0.9 s or more
    calls = await h.events(kind="tool_call")
    found = await results(h)
    assert [r["call_event"] for r in found] == [c.id for c in calls]
    assert [r["content"] for r in found] == ["first\nexit status 0", "second\nexit status 0"]
    answer = fake.requests[-1]
    assert validate_pairs(answer) == []
    assert sent("first\nexit status 0") in json.dumps(answer.body)


class SlowWrite:
    """A stand-in for a writing tool (access "write", a `path`): notes when it starts and ends."""

    name = "slow_write"
    access = "write"
    callers = frozenset({"turn"})

    def __init__(self) -> None:
        self.log: list[str] = []

    def schema(self) -> dict[str, Any]:
        return {"type": "function", "function": {"name": self.name, "parameters": {
            "type": "object", "properties": {"path": {"type": "string"}, "tag": {"type": "string"}}}}}

    async def execute(self, context: ToolContext, arguments: Any) -> ToolResult:
        self.log.append(f"start {arguments['tag']}")
        await asyncio.sleep(0.2)
        self.log.append(f"end {arguments['tag']}")
        return ToolResult(f"wrote {arguments['path']}")


@pytest.mark.parametrize("fmt", ["openai"], indirect=True)
async def test_writes_of_one_file_run_one_after_the_other(hw, fake, fmt, monkeypatch):
    tool = SlowWrite()
    tools = registry()
    monkeypatch.setitem(tools._tools, tool.name, tool)
    monkeypatch.setattr(tools, "_schemas", {})
    h = await hw()
    fake.queue(Reply(tool_calls=[("slow_write", {"path": "a.txt", "tag": "a1"}),
                                 ("slow_write", {"path": "b.txt", "tag": "b"}),
                                 ("slow_write", {"path": "./a.txt", "tag": "a2"})]),
               Reply(text="Written."))
    assert await h.say("Write them.")
    assert tool.log.index("end a1") < tool.log.index("start a2")  # one file: in order
    assert tool.log.index("start b") < tool.log.index("end a1")  # another file: at once
    assert [r["content"] for r in await results(h)] == ["wrote a.txt", "wrote b.txt", "wrote ./a.txt"]


@pytest.mark.parametrize("fmt", ["openai"], indirect=True)
async def test_the_programs_own_commands_run_in_the_replys_order(hw, fake, fmt):
    h = await hw()
    fake.queue(Reply(tool_calls=[slash("mark", "A"), bash("sleep 0.2; echo slept"), slash("marks"),
                                 slash("mark", "B"), slash("marks")]),
               Reply(text="Marked."))
    assert await h.say("Mark twice.")
    found = [r["content"] for r in await results(h)]
    assert found[1] == "slept\nexit status 0"
    assert "A" in found[2] and "B" not in found[2]  # each saw what the one before did
    assert "A" in found[4] and "B" in found[4]


class Broken(SlowWrite):
    """A tool with a bug: it raises instead of returning an error result."""

    name = "broken"
    access = "read"

    async def execute(self, context: ToolContext, arguments: Any) -> ToolResult:
        raise RuntimeError("a bug in the tool")


@pytest.mark.parametrize("fmt", ["openai"], indirect=True)
async def test_a_tool_that_raises_still_answers_its_call(hw, fake, fmt, monkeypatch):
    tools = registry()
    monkeypatch.setitem(tools._tools, "broken", Broken())
    monkeypatch.setattr(tools, "_schemas", {})
    h = await hw()
    fake.queue(Reply(tool_calls=[("broken", {}), bash("echo fine")]), Reply(text="Noted."))
    assert await h.say("Try it.")
    found = await results(h)
    assert [(r["content"], r["is_error"]) for r in found] == [
        ("Error: internal error in the tool: RuntimeError('a bug in the tool')", True),
        ("fine\nexit status 0", False)]
    assert validate_pairs(fake.requests[-1]) == []


async def test_a_secret_a_tool_prints_is_masked_in_the_log_and_the_request(hw, fake, fmt, monkeypatch,
                                                                          tmp_path):
    secret = "svc-0123456789abcdef"
    monkeypatch.setenv("MY_SERVICE_TOKEN", secret)
    # Passed to the child on purpose, yet masked when it shows up in the output.
    h = await hw(settings_of_session={"tools": ToolSettings(env_pass=("MY_SERVICE_TOKEN",))})
    (tmp_path / "work" / "leak.txt").write_text(f"token={secret}\n")
    fake.queue(Reply(tool_calls=[bash("echo $MY_SERVICE_TOKEN; cat leak.txt; "
                                      "echo sk-live-$(echo abcdefghijklmnop)")]),
               Reply(text="Seen."))
    assert await h.say("Show me.")
    (result,) = await results(h)
    assert result["content"] == "[secret]\ntoken=[secret]\n[secret]\nexit status 0"
    sent = json.dumps(fake.requests[-1].body)
    assert "token=[secret]" in sent
    assert secret not in sent and "sk-live-abcdefghijklmnop" not in sent
    logged = run_ikigai("--db", str(h.path), "log", "--json").stdout
    assert "token=[secret]" in logged
    assert secret not in logged and "sk-live-abcdefghijklmnop" not in logged


async def test_a_cancel_mid_command_keeps_the_output_so_far_flagged(hw, fake, fmt):
    h = await hw()
    fake.queue(Reply(text="Running it.", tool_calls=[bash("echo partial; sleep 30")]))
    task = await h.session.say(h.root, "Run the long one.")
    deadline = time.monotonic() + 10
    while not await h.events(kind="tool_call") and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.5)  # the command has printed its line
    started = time.monotonic()
    await h.session.cancel_turns([h.root])  # Esc
    assert time.monotonic() - started < 3
    assert task.cancelled()
    (result,) = await results(h)
    assert result["content"] == "partial\n[stopped by the user]"
    assert result["interrupted"] is True and result["is_error"] is True
    # The next request still pairs every call with its result, the partial output in it.
    fake.queue(Reply(text="Understood."))
    assert await h.say("Never mind.")
    answer = fake.requests[-1]
    assert validate_pairs(answer) == []
    assert sent("partial\n[stopped by the user]") in json.dumps(answer.body)


@pytest.mark.parametrize("fmt", ["openai"], indirect=True)
async def test_the_tool_rounds_of_a_turn_are_capped_by_the_setting(hw, fake, fmt):
    h = await hw(settings_of_session={"tools": ToolSettings(max_tool_rounds=2)})
    fake.queue(*[Reply(tool_calls=[bash(f"echo {i}")]) for i in range(3)])
    assert not await h.say("Loop.")
    assert len(await results(h)) == 2
    assert [n.message for n in h.of(ErrorNotice)] == ["stopped after 2 tool rounds"]
