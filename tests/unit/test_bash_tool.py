"""The bash tool with real processes: the output and exit status, the head-and-tail cap,
the timeout and the cancel stopping the whole process group (a grandchild too), the
partial output a cancel keeps, and the secrets left out of the child's environment."""

from __future__ import annotations

import asyncio
import os
import re
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from ikigai_tui.core.tools import ToolContext, registry
from ikigai_tui.core.tools.bash import HEAD, TAIL, BashTool
from ikigai_tui.core.tools.running import ToolInterrupted, ToolSettings

# The shell prints its pid, starts a child that starts a sleeping grandchild, and waits.
FAMILY = ("echo shell $$; sh -c 'sleep 60 & echo grandchild $!; wait' & echo child $!; "
          "echo before-the-wait; wait")


class FakeHost:
    """The little of a session the bash tool uses (a test fake: the folder is tmp_path)."""

    def __init__(self, folder: Path, settings: ToolSettings = ToolSettings()) -> None:
        self.folder = folder
        self.tool_settings = settings

    def workspace(self, agent_id: str) -> Path:
        return self.folder


def context(folder: Path, **settings) -> ToolContext:
    return ToolContext(FakeHost(folder, ToolSettings(**settings)), "agent-1")  # type: ignore[arg-type]


async def run(folder: Path, command: str, **arguments):
    return await BashTool().execute(context(folder), {"command": command, **arguments})


def gone(pid: int) -> bool:
    """Not running: no such process, or a zombie only waiting for its parent to reap it."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state in ("Z", "X")


def pids(text: str) -> dict[str, int]:
    return {name: int(pid) for name, pid in re.findall(r"^(shell|child|grandchild) (\d+)$", text, re.M)}


async def wait_gone(found: dict[str, int], within: float = 1.0) -> list[str]:
    """The processes still running after `within` seconds (reparented ones are reaped late)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline and not all(gone(p) for p in found.values()):
        await asyncio.sleep(0.02)
    return [name for name, pid in found.items() if not gone(pid)]


def test_bash_is_registered_as_a_shell_tool():
    tool = registry().get("bash")
    assert isinstance(tool, BashTool) and tool.access == "shell"
    assert tool.schema()["function"]["parameters"]["required"] == ["command"]


async def test_output_and_exit_status_in_the_workspace(tmp_path):
    result = await run(tmp_path, "pwd; echo out; echo err >&2; echo out2; exit 3")
    assert result.text == f"{tmp_path}\nout\nerr\nout2\nexit status 3"
    assert result.is_error
    ok = await run(tmp_path, "printf 'no newline'")
    assert ok == ("no newline\nexit status 0", False)


async def test_stdin_is_closed(tmp_path):
    result = await run(tmp_path, "cat; echo read-done", timeout=5)
    assert result == ("read-done\nexit status 0", False)


async def test_long_output_keeps_its_head_and_tail(tmp_path):
    result = await run(tmp_path, "printf START; head -c 50000 /dev/zero | tr '\\0' x; printf END")
    total = 5 + 50000 + 3
    omitted = total - HEAD - TAIL
    assert result.text.startswith("START" + "x" * (HEAD - 5) + f"\n[... {omitted} bytes omitted ...]\n")
    assert result.text.endswith("x" * (TAIL - 3) + "END\nexit status 0")
    assert len(result.text) < HEAD + TAIL + 100


async def test_the_timeout_kills_the_whole_process_group(tmp_path):
    started = time.monotonic()
    result = await run(tmp_path, FAMILY, timeout=1)
    elapsed = time.monotonic() - started
    found = pids(result.text)
    assert set(found) == {"shell", "child", "grandchild"}, result.text
    assert "before-the-wait\n" in result.text and result.is_error
    assert result.text.endswith("\nkilled after 1 s (timeout)")
    assert elapsed < 4
    assert await wait_gone(found) == []


async def test_the_timeout_is_capped_by_the_setting(tmp_path):
    tool = BashTool()
    started = time.monotonic()
    result = await tool.execute(context(tmp_path, bash_max_timeout=0.5),
                                {"command": "sleep 30", "timeout": 100})
    assert result == ("killed after 0.5 s (timeout)", True)
    assert time.monotonic() - started < 3


async def test_a_cancel_kills_the_group_and_keeps_the_output_so_far(tmp_path):
    task = asyncio.ensure_future(run(tmp_path, FAMILY))
    await asyncio.sleep(0.5)
    task.cancel()
    with pytest.raises(ToolInterrupted) as stopped:
        await task
    found = pids(stopped.value.output)
    assert set(found) == {"shell", "child", "grandchild"}, stopped.value.output
    assert "before-the-wait\n" in stopped.value.output and stopped.value.output.endswith("\n")
    assert isinstance(stopped.value, asyncio.CancelledError)
    assert await wait_gone(found) == []


async def test_children_left_behind_by_the_shell_are_stopped(tmp_path):
    result = await run(tmp_path, "sleep 60 & echo child $!", timeout=5)
    assert result.text.endswith("exit status 0")
    assert await wait_gone(pids(result.text)) == []


async def test_the_environment_has_no_secrets_unless_passed(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-openai-key-123456")
    monkeypatch.setenv("IKIGAI_X", "ikigai-setting")
    monkeypatch.setenv("DATABASE_URL", "postgres://u:p@h/db")
    monkeypatch.setenv("PLAIN_SETTING", "visible")
    command = "env"
    shown = (await run(tmp_path, command)).text
    names = {line.split("=", 1)[0] for line in shown.splitlines()}
    assert "PLAIN_SETTING=visible" in shown.splitlines()
    assert not names & {"OPENAI_API_KEY", "IKIGAI_X", "DATABASE_URL"}
    passed = await BashTool().execute(context(tmp_path, env_pass=("IKIGAI_X",)), {"command": command})
    lines = passed.text.splitlines()
    assert "IKIGAI_X=ikigai-setting" in lines
    assert not any(line.startswith("OPENAI_API_KEY=") for line in lines)


async def test_bad_arguments_are_error_results(tmp_path):
    tool = BashTool()
    assert await tool.execute(context(tmp_path), {"command": " "}) == (
        "Error: 'command' must be a non-empty string", True)
    assert await tool.execute(context(tmp_path), {"command": "true", "timeout": -1}) == (
        "Error: 'timeout' must be a number of seconds, more than 0", True)
    assert await tool.execute(context(tmp_path), ["ls"]) == (
        "Error: arguments must be an object with a 'command'", True)
    host = SimpleNamespace(tool_settings=ToolSettings())  # no workspace: refused
    assert await tool.execute(ToolContext(host, "a"), {"command": "true"}) == (  # type: ignore[arg-type]
        "Error: this agent has no working folder", True)


def test_describe_shows_the_command_and_its_folder(tmp_path):
    tool = BashTool()
    assert tool.describe({"command": "make test"}, context(tmp_path)) == f"$ make test\nin {tmp_path}"
    assert tool.describe({"command": "ls"}) == "$ ls"
    assert tool.describe({}) == "bash: 'command' must be a non-empty string"
