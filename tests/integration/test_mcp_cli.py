"""MCP servers from the real command line (issue 25 item 2): an [mcp.NAME] table in the
config file, a headless `-p` turn that calls the fake MCP server's tool through real
litellm (refused without --allow, run with it, the server stopped when ikigai ends),
`log --json` with the call and its result, and a bad table refused in one line before
anything is written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes.server import FakeProvider, Reply, validate_pairs

SERVER = str(Path(__file__).resolve().parents[1] / "fakes" / "mcp_server.py")


@pytest.fixture
def sync_fake():
    with FakeProvider() as running:
        yield running


def config(tmp_path: Path, table: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(table)
    return path


def server_table(name: str = "fake") -> str:
    return f"[mcp.{name}]\ncommand = {json.dumps([sys.executable, SERVER])}\n"


def ikigai(tmp_path: Path, fake: FakeProvider, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "OPENAI_API_KEY": "test-key"}
    return subprocess.run(
        [sys.executable, "-m", "ikigai_tui", "--db", str(tmp_path / "m.db"), "--model", "openai/x",
         "--api-base", fake.openai_base, "--config", str(tmp_path / "config.toml"), *args],
        capture_output=True, text=True, env=env, timeout=90, cwd=tmp_path)


def test_print_mode_refuses_an_mcp_tool_unless_allowed(tmp_path, sync_fake):
    config(tmp_path, server_table())
    sync_fake.queue(Reply(tool_calls=[("fake__echo", {"text": "first"})]), Reply(text="Refused."),
                    Reply(tool_calls=[("fake__echo", {"text": "second"})]), Reply(text="Echoed."))
    refused = ikigai(tmp_path, sync_fake, "-p", "echo first")
    assert refused.returncode == 0, refused.stderr
    assert "fake__echo" in [t["function"]["name"] for t in sync_fake.requests[0].body["tools"]]
    result = sync_fake.requests[1].body["messages"][-1]
    assert result["role"] == "tool" and "refused" in result["content"]

    allowed = ikigai(tmp_path, sync_fake, "-p", "echo second", "--allow", "mcp.fake__*")
    assert allowed.returncode == 0, allowed.stderr
    assert "Echoed." in allowed.stdout
    last = sync_fake.requests[-1]
    assert validate_pairs(last) == []
    assert last.body["messages"][-1] == {"role": "tool", "tool_call_id": last.body["messages"][-1]
                                         ["tool_call_id"], "content": "second"}

    log = subprocess.run([sys.executable, "-m", "ikigai_tui", "--db", str(tmp_path / "m.db"),
                          "log", "--json"], capture_output=True, text=True, timeout=60)
    events = json.loads(log.stdout)
    events = events["events"] if isinstance(events, dict) else events
    calls = [e for e in events if e["kind"] == "tool_call"]
    results = [e for e in events if e["kind"] == "tool_result"]
    assert [c["payload"]["name"] for c in calls] == ["fake__echo", "fake__echo"]
    assert [(r["payload"]["content"], r["payload"]["is_error"]) for r in results][-1] == ("second", False)
    # The server ended with ikigai: no process of it is left.
    left = subprocess.run(["pgrep", "-f", SERVER], capture_output=True, text=True)
    assert left.stdout.strip() == ""


def test_a_bad_mcp_table_is_one_line_and_writes_nothing(tmp_path, sync_fake):
    config(tmp_path, '[mcp.fake]\ncommand = "python server.py"\n')
    done = ikigai(tmp_path, sync_fake, "-p", "hello")
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "[mcp.fake]: command must be a list" in lines[0]
    assert not (tmp_path / "m.db").exists()
    assert sync_fake.requests == []
