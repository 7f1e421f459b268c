"""MCP servers as tool providers (issue 25 item 2), through real litellm turns against the
loopback fake provider and the fake MCP server (tests/fakes/mcp_server.py, written with
the `mcp` SDK): the tools offered as SERVER__tool with their schemas and called; servers
started by the first turn and stopped with the session; a server that fails to start,
hangs, dies or errs; streamable HTTP on 127.0.0.1; no secret in a server's environment
or in what it returns; /mcp and /mcp restart."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ikigai_tui.core.notices import ErrorNotice
from ikigai_tui.core.tools.permissions import PermissionService, Rules
from ikigai_tui.core.tools.servers import FAILED, NOT_STARTED, RUNNING, STOPPED, ServerConfig
from ikigai_tui.mcp_servers import McpServers
from tests.fakes.server import Reply, validate_pairs

SERVER = str(Path(__file__).resolve().parents[1] / "fakes" / "mcp_server.py")
openai_only = pytest.mark.parametrize("fmt", ["openai"], indirect=True)


def stdio(name: str = "fake", *flags: str, timeout: float = 10.0, startup_timeout: float = 20.0,
          **options) -> ServerConfig:
    return ServerConfig(name, (sys.executable, SERVER, *flags), timeout=timeout,
                        startup_timeout=startup_timeout, **options)


def offered(request) -> list[str]:
    """The tool names a provider request offered, whatever its wire format."""
    body = request.body
    names: list[str] = []
    for tool in body.get("tools") or []:
        if "function" in tool:
            names.append(tool["function"]["name"])
        elif "name" in tool:
            names.append(tool["name"])
        for declaration in tool.get("functionDeclarations", tool.get("function_declarations", [])):
            names.append(declaration["name"])
    return names


def errors(h) -> list[str]:
    return [n.message for n in h.notices if isinstance(n, ErrorNotice)]


async def results(h) -> list[dict]:
    return [e.payload for e in await h.events(kind="tool_result")]


@pytest.fixture
def served(make, tmp_path):
    """make(*configs, rules=...) -> a harness whose session has these MCP servers (every
    tool allowed unless `rules` say otherwise)."""

    async def _make(*configs: ServerConfig, rules: dict | None = None, **options):
        h = await make(**options)
        h.session.permissions = PermissionService(Rules({"*": "allow"} if rules is None else rules))
        h.servers = McpServers(configs, base_dir=str(tmp_path))
        h.session.use_tool_servers(h.servers)
        return h

    return _make


async def test_a_server_tool_is_offered_with_its_schema_called_and_answered(served, fake, fmt):
    h = await served(stdio(), rules={"mcp.fake__*": "allow"})
    assert [s.state for s in h.servers.states()] == [NOT_STARTED]  # lazily: not before a turn
    fake.queue(Reply(tool_calls=[("fake__echo", {"text": "hello through MCP"})]),
               Reply(text="It said hello."))
    assert await h.say("Ask the server to echo.")
    first = fake.requests[0]
    assert "fake__echo" in offered(first) and "fake__add" in offered(first)
    assert "read_file" in offered(first)  # beside the built-in tools
    if fmt == "openai":
        echo = next(t for t in first.body["tools"] if t["function"]["name"] == "fake__echo")
        assert echo["function"]["parameters"]["properties"]["text"]["type"] == "string"
        assert echo["function"]["parameters"]["required"] == ["text"]
        assert "Say the text back." in echo["function"]["description"]
    found = await results(h)
    assert [(r["content"], r["is_error"]) for r in found] == [("hello through MCP", False)]
    last = fake.requests[-1]
    assert validate_pairs(last) == []
    assert "hello through MCP" in json.dumps(last.body)


@openai_only
async def test_mcp_tools_ask_by_default_and_a_refusal_is_what_the_llm_reads(served, fake):
    h = await served(stdio(), rules={})  # the defaults: an MCP tool asks; nobody answers here
    fake.queue(Reply(tool_calls=[("fake__pid", {})]), Reply(text="Refused, then."))
    assert await h.say("Get the pid.")
    [result] = await results(h)
    assert result["is_error"] and "refused" in result["content"]
    assert not result["content"].strip().isdigit()


@openai_only
async def test_a_denied_pattern_keeps_the_server_tool_from_running(served, fake):
    h = await served(stdio(), rules={"*": "allow", "mcp.fake__*": "deny"})
    fake.queue(Reply(tool_calls=[("fake__pid", {})]), Reply(text="Denied."))
    assert await h.say("Get the pid.")
    [result] = await results(h)
    assert result["is_error"] and "deny" in result["content"]


@openai_only
async def test_a_server_that_fails_to_start_is_one_line_and_offers_nothing(served, fake):
    h = await served(stdio("broken", "--crash-on-start"), stdio("fake"))
    fake.queue(Reply(text="Fine without it."))
    assert await h.say("Hello.")
    [line] = errors(h)
    assert "'broken'" in line and "failed to start" in line and "/mcp restart broken" in line
    assert "told to crash" in line  # what it wrote to its error output says why
    assert "\n" not in line
    names = offered(fake.requests[0])
    assert not any(n.startswith("broken__") for n in names)
    assert "fake__echo" in names  # the other server is unaffected
    states = {s.config.name: s for s in h.servers.states()}
    assert states["broken"].state == FAILED and states["fake"].state == RUNNING
    # The next turn does not try it again (until /mcp restart).
    fake.queue(Reply(text="Still fine."))
    assert await h.say("Again.")
    assert len(errors(h)) == 1


@openai_only
async def test_a_server_that_does_not_answer_at_start_times_out(served, fake):
    h = await served(stdio("stuck", "--hang-on-start", startup_timeout=1.0))
    fake.queue(Reply(text="Fine."))
    started = time.monotonic()
    assert await h.say("Hello.")
    assert time.monotonic() - started < 8
    [line] = errors(h)
    assert "'stuck'" in line and "did not answer within 1s" in line
    assert h.servers.states()[0].state == FAILED


@openai_only
async def test_a_server_that_dies_mid_call_loses_its_tools_until_restart(served, fake):
    h = await served(stdio())
    fake.queue(Reply(tool_calls=[("fake__crash", {})]), Reply(text="It crashed."))
    assert await h.say("Crash it.")
    [result] = await results(h)
    assert result["is_error"] and "'fake'" in result["content"]
    [line] = errors(h)
    assert "/mcp restart fake" in line and "crashing now" in line
    assert not any(n.startswith("fake__") for n in offered(fake.requests[-1]))
    # A call the LLM still makes to it says the server is not running.
    fake.queue(Reply(tool_calls=[("fake__echo", {"text": "anyone?"})]), Reply(text="Down."))
    assert await h.say("Try once more.")
    down = (await results(h))[-1]
    assert down["is_error"] and "'fake' is not running" in down["content"]

    listing = await h.session.command(h.root, "/mcp")
    assert any("fake" in line and "failed" in line for line in listing.lines)
    restarted = await h.session.command(h.root, "/mcp restart fake")
    assert "restarted" in restarted.lines[0]
    fake.queue(Reply(tool_calls=[("fake__echo", {"text": "back"})]), Reply(text="Back."))
    assert await h.say("Echo again.")
    assert "fake__echo" in offered(fake.requests[-2])
    assert (await results(h))[-1]["content"] == "back"


@openai_only
async def test_a_call_that_does_not_answer_in_time_is_an_error_and_a_line(served, fake):
    h = await served(stdio(timeout=1.0))
    fake.queue(Reply(tool_calls=[("fake__hang", {"seconds": 30})]), Reply(text="Gave up."))
    started = time.monotonic()
    assert await h.say("Wait for it.")
    assert time.monotonic() - started < 10
    [result] = await results(h)
    assert result["is_error"] and "did not answer within 1s" in result["content"]
    assert any("did not answer" in line for line in errors(h))
    assert h.servers.states()[0].state == FAILED


@openai_only
async def test_error_results_and_other_content_types(served, fake):
    h = await served(stdio())
    fake.queue(Reply(tool_calls=[("fake__fail", {"why": "because"}), ("fake__picture", {}),
                                 ("fake__resource", {}), ("fake__add", {"a": 2, "b": 40})]),
               Reply(text="Seen."))
    assert await h.say("Try them.")
    failed, picture, resource, added = await results(h)
    assert failed["is_error"] is True
    assert picture["is_error"] is False
    lines = picture["content"].splitlines()
    assert lines[0] == "A caption."
    assert lines[1].startswith("[image content: image/png, 2,048 bytes")
    assert "file:///tmp/plot.png" in lines[2]
    assert "the notes' text" in resource["content"]
    assert "application/octet-stream, 300 bytes" in resource["content"]
    assert added["content"] == "42"
    assert validate_pairs(fake.requests[-1]) == []


@openai_only
async def test_no_secret_in_a_servers_environment_nor_in_what_it_returns(served, fake, tmp_path,
                                                                         monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-token-value-123456")
    monkeypatch.setenv("IKIGAI_DB", str(tmp_path / "secret.db"))
    h = await served(stdio(env={"TOKEN": "${GITHUB_TOKEN}"}))
    fake.queue(Reply(tool_calls=[("fake__getenv", {"name": "OPENAI_API_KEY"}),
                                 ("fake__getenv", {"name": "IKIGAI_DB"}),
                                 ("fake__getenv", {"name": "GITHUB_TOKEN"}),
                                 ("fake__getenv", {"name": "TOKEN"})]),
               Reply(text="Checked."))
    assert await h.say("Check the environment.")
    key, db, token, named = [r["content"] for r in await results(h)]
    assert key == "<unset>" and db == "<unset>" and token == "<unset>"
    assert "ghp-token-value-123456" not in named and named != "<unset>"  # given, then masked
    everything = json.dumps([e.payload for e in await h.events()])
    assert "ghp-token-value-123456" not in everything
    assert "ghp-token-value-123456" not in json.dumps(fake.requests[-1].body)


@openai_only
async def test_a_server_runs_in_its_folder(served, fake, tmp_path):
    folder = tmp_path / "server-home"
    folder.mkdir()
    h = await served(stdio(cwd=str(folder)))
    fake.queue(Reply(tool_calls=[("fake__cwd", {})]), Reply(text="There."))
    assert await h.say("Where are you?")
    assert (await results(h))[0]["content"] == str(folder)


@openai_only
async def test_servers_stop_with_the_session(served, fake):
    h = await served(stdio())
    fake.queue(Reply(tool_calls=[("fake__pid", {})]), Reply(text="Noted."))
    assert await h.say("Your pid?")
    pid = int((await results(h))[0]["content"])
    os.kill(pid, 0)  # running
    await h.session.close()
    assert h.servers.states()[0].state == STOPPED
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def http_server():
    port = _free_port()
    process = subprocess.Popen([sys.executable, SERVER, "--http", str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            break
        except OSError:
            if time.monotonic() > deadline or process.poll() is not None:
                process.kill()
                pytest.fail("the fake MCP HTTP server did not start")
            time.sleep(0.05)
    yield f"http://127.0.0.1:{port}/mcp", process
    process.kill()
    process.wait()


@openai_only
async def test_a_streamable_http_server_on_loopback(served, fake, http_server):
    url, process = http_server
    h = await served(ServerConfig("web", url=url, timeout=10, startup_timeout=20))
    fake.queue(Reply(tool_calls=[("web__add", {"a": 20, "b": 22})]), Reply(text="42."))
    assert await h.say("Add them.")
    assert [(r["content"], r["is_error"]) for r in await results(h)] == [("42", False)]
    listing = await h.session.command(h.root, "/mcp")
    assert any("web" in line and "running" in line and url in line for line in listing.lines)
    # The server goes away: the next call says so, and its tools go with it.
    process.kill()
    process.wait()
    fake.queue(Reply(tool_calls=[("web__echo", {"text": "anyone?"})]), Reply(text="Gone."))
    assert await h.say("Again.")
    assert (await results(h))[-1]["is_error"] is True
    assert any("'web'" in line for line in errors(h))
    assert h.servers.states()[0].state == FAILED


@openai_only
async def test_mcp_lists_servers_states_and_tools(served, fake):
    h = await served(stdio("fake"), stdio("broken", "--crash-on-start"))
    before = await h.session.command(h.root, "/mcp")
    assert before.lines[0] == "MCP servers (2):"
    assert sum("not started" in line for line in before.lines) == 2
    fake.queue(Reply(text="Hi."))
    assert await h.say("Hello.")
    after = (await h.session.command(h.root, "/mcp")).lines
    text = "\n".join(after)
    assert "fake  running, 11 tools" in text
    assert "fake__echo  Say the text back." in text
    assert "broken  failed:" in text and "/mcp restart broken" in text
    with pytest.raises(Exception) as unknown:
        await h.session.command(h.root, "/mcp restart nosuch")
    assert "no MCP server 'nosuch'" in str(unknown.value)
    with pytest.raises(Exception) as still:
        await h.session.command(h.root, "/mcp restart broken")
    assert "failed to start" in str(still.value)


@openai_only
async def test_mcp_without_servers_says_how_to_add_one(make):
    h = await make()
    result = await h.session.command(h.root, "/mcp")
    assert "No MCP server is configured" in result.lines[0]


@openai_only
async def test_two_turns_starting_at_once_start_a_server_once(served):
    h = await served(stdio())
    servers = h.servers
    starts: list[str] = []
    start_one = servers._start

    async def counted(server):
        starts.append(server.config.name)
        return await start_one(server)

    servers._start = counted
    first, second = await asyncio.gather(h.session.offer_tools(h.root),
                                         h.session.offer_tools(h.root))
    assert starts == ["fake"]
    assert servers.states()[0].state == RUNNING
