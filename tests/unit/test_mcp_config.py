"""[mcp.NAME] tables (issue 25 item 2), what the core makes of a server's tools (their
offered names, schemas and what the permission dialog shows), and how a result's content
becomes the tool result's text."""

from __future__ import annotations

import asyncio
import base64
import json
from types import SimpleNamespace as NS

import pytest

from ikigai_tui.config import ConfigError, load
from ikigai_tui.core.tools import ToolSet, registry
from ikigai_tui.core.tools.servers import (
    RUNNING, McpTool, ServerConfig, ServerState, ServerTool, offered_name, parameters_of,
)
from ikigai_tui.mcp_servers import StartError, expand
from ikigai_tui.mcp_servers.results import RESULT_LIMIT, render


def config_of(tmp_path, text: str):
    path = tmp_path / "config.toml"
    path.write_text(text)
    return load(config_path=str(path), env={})


def test_stdio_and_http_servers_are_read(tmp_path):
    cfg = config_of(tmp_path, '''
[mcp.files]
command = ["npx", "-y", "@modelcontextprotocol/server-filesystem", "."]
env = { ROOT = "${HOME}" }
cwd = "sub"
timeout = 5

[mcp.github]
url = "https://api.example.com/mcp"
headers = { Authorization = "Bearer ${GITHUB_TOKEN}" }
startup_timeout = 12.5
''')
    files, github = cfg.mcp_servers
    assert files == ServerConfig("files", ("npx", "-y", "@modelcontextprotocol/server-filesystem", "."),
                                 "", {"ROOT": "${HOME}"}, "sub", {}, 5.0, 30.0)
    assert files.transport == "stdio"
    assert github.transport == "http" and github.url == "https://api.example.com/mcp"
    assert (github.timeout, github.startup_timeout) == (120.0, 12.5)
    assert github.where() == "https://api.example.com/mcp"  # never the headers


def test_no_table_no_servers(tmp_path):
    assert config_of(tmp_path, 'model = "x"\n').mcp_servers == ()


@pytest.mark.parametrize("table, says", [
    ('[mcp.a]\nenv = {}\n', "needs either command"),
    ('[mcp.a]\ncommand = ["x"]\nurl = "http://h/mcp"\n', "not both"),
    ('[mcp.a]\ncommand = "npx server"\n', "command must be a list"),
    ('[mcp.a]\ncommand = []\n', "command must be a list"),
    ('[mcp.a]\nurl = "ftp://h/x"\n', "url must be an http"),
    ('[mcp.a]\ncommand = ["x"]\nenv = { K = 1 }\n', "env must be a table of strings"),
    ('[mcp.a]\nurl = "http://h/mcp"\nenv = { K = "v" }\n', "env is for a command"),
    ('[mcp.a]\ncommand = ["x"]\nheaders = { K = "v" }\n', "headers is for a url"),
    ('[mcp.a]\ncommand = ["x"]\ntimeout = 0\n', "timeout must be seconds"),
    ('[mcp.a]\ncommand = ["x"]\nstartup_timeout = true\n', "startup_timeout must be seconds"),
    ('[mcp.a]\ncommand = ["x"]\nargs = ["y"]\n', "unknown key 'args'"),
    ('[mcp."a__b"]\ncommand = ["x"]\n', "no '__'"),
    ('[mcp."a b"]\ncommand = ["x"]\n', "letters, digits"),
    ('mcp = 3\n', "'mcp' must hold tables"),
])
def test_a_bad_server_table_is_one_clear_line(tmp_path, table, says):
    with pytest.raises(ConfigError) as bad:
        config_of(tmp_path, table)
    assert says in str(bad.value)
    assert "\n" not in str(bad.value)


def test_the_environment_is_named_not_written():
    assert expand("Bearer ${TOKEN}", {"TOKEN": "abc"}) == "Bearer abc"
    assert expand("$A-$B", {"A": "1", "B": "2"}) == "1-2"
    with pytest.raises(StartError) as missing:
        expand("${NOPE}", {})
    assert "$NOPE is not set" in str(missing.value)


def test_offered_names_fit_every_provider():
    assert offered_name("github", "create_issue") == "github__create_issue"
    assert offered_name("s", "files.read/v2") == "s__files_read_v2"
    assert len(offered_name("server", "x" * 100)) == 64


def test_a_server_schema_becomes_the_functions_parameters():
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "Args",
              "type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    assert parameters_of(schema) == {"type": "object", "properties": {"q": {"type": "string"}},
                                     "required": ["q"]}
    assert parameters_of({"type": "string"}) == {"type": "object", "properties": {}}
    assert parameters_of(None) == {"type": "object", "properties": {}}


class Servers:
    """A stand-in for the ToolServers port: one running server with the tools given."""

    def __init__(self, *tools: ServerTool) -> None:
        self.version = 1
        self.tools = tools

    def states(self):
        return [ServerState(ServerConfig("gh", ("x",)), RUNNING, "", self.tools)]


def test_the_tool_as_offered_and_as_the_permission_dialog_shows_it():
    tool = McpTool(ServerTool("gh", "create_issue", "Open an issue.\nMore.",
                              {"type": "object", "properties": {}}), Servers())
    assert tool.name == "gh__create_issue" and tool.access == "mcp"
    function = tool.schema()["function"]
    assert function["name"] == "gh__create_issue"
    assert function["description"].startswith("[MCP server gh] Open an issue.")
    shown = tool.describe({"title": "Bug", "body": "It breaks"})
    assert "MCP server 'gh'" in shown and "'create_issue'" in shown
    assert json.loads(shown.split("\n", 1)[1]) == {"title": "Bug", "body": "It breaks"}


def test_the_offered_list_is_one_object_until_the_servers_change():
    servers = Servers(ServerTool("gh", "a", "", {"type": "object"}))
    tools = ToolSet(registry, servers)
    first = tools.schemas()
    assert tools.schemas() is first  # token counts are cached by the list's identity
    assert [s["function"]["name"] for s in first][-1] == "gh__a"
    assert first[:-1] == registry().schemas()
    assert tools.get("gh__a") is not None and tools.get("read_file") is not None
    servers.tools += (ServerTool("gh", "b", "", {"type": "object"}),)
    servers.version += 1
    second = tools.schemas()
    assert second is not first and [s["function"]["name"] for s in second][-2:] == ["gh__a", "gh__b"]
    assert ToolSet(registry, None).schemas() is registry().schemas()  # no servers: the built-ins


def test_a_server_that_stopped_is_named_when_its_tool_is_called():
    servers = Servers()
    tools = ToolSet(registry, servers)
    host = NS()
    result = asyncio.run(tools.execute(NS(host=host, agent_id="a", caller="turn", call_event=None),
                                       "gh__create_issue", "{}"))
    assert result.is_error and "MCP server 'gh' is not running" in result.text
    other = asyncio.run(tools.execute(NS(host=host, agent_id="a", caller="turn", call_event=None),
                                      "zz__x", "{}"))
    assert other.is_error and "unknown tool 'zz__x'" in other.text


def block(**fields):
    return NS(**fields)


def test_text_is_kept_and_every_other_content_is_one_line():
    png = base64.b64encode(b"\0" * 20_000).decode()
    result = NS(content=[
        block(type="text", text="line one\nline two"),
        block(type="image", mime_type="image/png", data=png),
        block(type="audio", mime_type="audio/wav", data=base64.b64encode(b"abc").decode()),
        block(type="resource_link", uri="file:///a.txt", name="a", mime_type="text/plain"),
        block(type="resource", resource=NS(uri="file:///n.md", text="# notes")),
        block(type="resource", resource=NS(uri="file:///b.bin", mime_type=None,
                                           blob=base64.b64encode(b"\1" * 10).decode())),
        block(type="video"),
    ], structured_content={"ignored": True})
    assert render(result).splitlines() == [
        "line one", "line two",
        "[image content: image/png, 19.5 KB; not shown to the model]",
        "[audio content: audio/wav, 3 bytes; not shown to the model]",
        "[resource link: file:///a.txt (a), text/plain]",
        "[resource file:///n.md]", "# notes",
        "[resource file:///b.bin: binary, 10 bytes; not shown to the model]",
        "[video content; not shown to the model]",
    ]


def test_structured_content_alone_is_json_and_nothing_is_said_so():
    assert json.loads(render(NS(content=[], structured_content={"n": 1}))) == {"n": 1}
    assert render(NS(content=[], structured_content=None)) == "(no output)"


def test_a_huge_result_is_cut_and_says_so():
    text = render(NS(content=[block(type="text", text="y" * (RESULT_LIMIT + 500))]))
    assert text.startswith("y" * 100) and text.endswith("[cut: 500 more characters of this result]")


def _toml_blocks(page: str, after: str) -> list[str]:
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / page).read_text(encoding="utf-8")
    text = text[text.index(after):]
    blocks = []
    while "```toml\n" in text:
        start = text.index("```toml\n") + len("```toml\n")
        end = text.index("```", start)
        blocks.append(text[start:end].replace("\n  ", "\n"))
        text = text[end + 3:]
    return blocks


@pytest.mark.parametrize("page, after", [("README.md", "## Tools"),
                                         ("docs/tools.md", "## MCP servers")])
def test_the_documented_examples_load(tmp_path, page, after):
    blocks = _toml_blocks(page, after)
    assert blocks
    servers = []
    for block in blocks:
        servers.extend(config_of(tmp_path, block).mcp_servers)
    assert {"files", "github"} <= {s.name for s in servers}
