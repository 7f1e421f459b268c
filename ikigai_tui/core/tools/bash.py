"""The `bash` tool: one command, run by a shell in the agent's working folder.

The command runs in a process group of its own (a new session), stdin closed, its
environment without the secrets (support/secrets.py; the setting `tool_env_pass` lets
names through), stdout and stderr interleaved in one pipe as a terminal shows them. The
output is capped head and tail; the result ends with the exit status, or with the
timeout that killed it. On a timeout, a cancel (Esc) or when the shell exits leaving
children behind, the whole group is stopped: SIGTERM, then SIGKILL after a short grace.
A cancelled command keeps what it printed (ToolInterrupted carries it to the turn).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ikigai_tui.core.tools import TURN, ToolContext, ToolResult
from ikigai_tui.core.tools.running import ToolInterrupted, ToolSettings
from ikigai_tui.support.secrets import child_environment

if TYPE_CHECKING:
    from asyncio.subprocess import Process

DEFAULT_TIMEOUT = 120.0
HEAD = TAIL = 8 * 1024  # bytes of output kept from the start and from the end
GRACE = 1.0  # seconds between SIGTERM and SIGKILL
LINGER = 0.2  # seconds the pipe may stay open after the shell exits (its children's)
_READ = 64 * 1024


class ShellHost(Protocol):
    """What the bash tool uses of its host (the session): the tool settings and the
    agent's working folder."""

    tool_settings: ToolSettings

    def workspace(self, agent_id: str) -> Path: ...


def shell() -> str:
    """bash when the machine has it, else the POSIX shell."""
    return shutil.which("bash") or "/bin/sh"


class CappedOutput:
    """The first HEAD and the last TAIL bytes of a stream, and how many came."""

    def __init__(self, head: int = HEAD, tail: int = TAIL) -> None:
        self.head_size, self.tail_size = head, tail
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.head_size - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            del self.tail[:max(0, len(self.tail) - self.tail_size)]

    def text(self) -> str:
        omitted = self.total - len(self.head) - len(self.tail)
        head = self.head.decode("utf-8", "replace")
        tail = self.tail.decode("utf-8", "replace")
        if omitted <= 0:
            return head + tail
        return f"{head}\n[... {omitted} bytes omitted ...]\n{tail}"


def _arguments(arguments: Any, longest: float) -> tuple[str, float] | str:
    """(command, timeout) or why the arguments cannot run."""
    if not isinstance(arguments, dict):
        return "arguments must be an object with a 'command'"
    command = arguments.get("command")
    if not isinstance(command, str) or not command.strip():
        return "'command' must be a non-empty string"
    timeout = arguments.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        return "'timeout' must be a number of seconds, more than 0"
    return command, min(float(timeout), longest)


def _seconds(value: float) -> str:
    return f"{value:g}"


class BashTool:
    name = "bash"
    access = "shell"
    callers = frozenset({TURN})

    def schema(self) -> dict[str, Any]:
        return {"type": "function", "function": {
            "name": self.name,
            "description": (
                "Run one shell command in the working folder and return its output "
                "(stdout and stderr together, the start and the end of long output) and "
                "its exit status. No input; the command is stopped after `timeout` "
                f"seconds (default {_seconds(DEFAULT_TIMEOUT)})."),
            "parameters": {"type": "object", "properties": {
                "command": {"type": "string", "description": "The command, as typed at a shell prompt."},
                "timeout": {"type": "number", "description": "Seconds before it is stopped."},
            }, "required": ["command"]},
        }}

    def describe(self, arguments: Any, context: ToolContext | None = None) -> str:
        """The command and where it runs (with the context: the agent's folder)."""
        longest = context.host.tool_settings.bash_max_timeout if context else float("inf")
        checked = _arguments(arguments, longest)
        if isinstance(checked, str):
            return f"bash: {checked}"
        command, _timeout = checked
        folder = _workspace(context) if context is not None else None
        return f"$ {command}" + (f"\nin {folder}" if folder is not None else "")

    async def execute(self, context: ToolContext, arguments: Any) -> ToolResult:
        settings = context.host.tool_settings
        checked = _arguments(arguments, settings.bash_max_timeout)
        if isinstance(checked, str):
            return ToolResult(f"Error: {checked}", True)
        command, timeout = checked
        folder = _workspace(context)
        if folder is None:
            return ToolResult("Error: this agent has no working folder", True)
        try:
            process = await asyncio.create_subprocess_exec(
                shell(), "-c", command, cwd=folder, stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
                env=child_environment(passed=settings.env_pass), start_new_session=True)
        except OSError as exc:
            return ToolResult(f"Error: cannot run the command in {folder}: {exc.strerror or exc}", True)
        return await _supervise(process, timeout)


def _workspace(context: ToolContext) -> Path | None:
    workspace = getattr(context.host, "workspace", None)
    return workspace(context.agent_id) if workspace is not None else None


async def _supervise(process: Process, timeout: float) -> ToolResult:
    """Read the output until the command ends, the timeout passes or the call is
    cancelled; in every case no process of its group is left."""
    output = CappedOutput()
    reading = asyncio.ensure_future(_read(process, output))
    try:
        try:
            await asyncio.wait_for(_exited(process, reading), timeout)
        except TimeoutError:
            await _stop_group(process)
            await _drain(reading)
            return _result(output, f"killed after {_seconds(timeout)} s (timeout)", True)
        # The shell is gone; a child it left may hold the pipe: a moment, then the group.
        await asyncio.wait([reading], timeout=LINGER)
        await _stop_group(process)
        await _drain(reading)
    except asyncio.CancelledError:
        await asyncio.shield(_stop_group(process))
        await _drain(reading)
        raise ToolInterrupted(output.text()) from None
    status = process.returncode
    if status is not None and status < 0:
        return _result(output, f"killed by signal {_signal_name(-status)}", True)
    return _result(output, f"exit status {status}", status != 0)


async def _exited(process: Process, reading: asyncio.Future) -> None:
    """Until the shell has exited. asyncio's `wait()` also waits for the pipe to close,
    which a child left running holds open: past the end of the output, the exit status
    is looked at instead."""
    while process.returncode is None:
        if reading.done():
            await process.wait()
            return
        await asyncio.wait([reading], timeout=0.05)


async def _read(process: Process, output: CappedOutput) -> None:
    assert process.stdout is not None
    while chunk := await process.stdout.read(_READ):
        output.add(chunk)


async def _drain(reading: asyncio.Future) -> None:
    """Let the reader take what is left in the pipe (its writers are gone), then stop it."""
    await asyncio.wait([reading], timeout=LINGER)
    reading.cancel()
    await asyncio.wait([reading])


def _group_alive(pgid: int) -> bool:
    """Whether a process of the group still runs. A zombie does not count: one whose
    parent died waits for the machine's init to reap it, which may never come."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        entries = os.listdir("/proc")
    except OSError:
        return True  # no /proc: the signal's answer is all there is
    for entry in entries:
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as stat:
                    fields = stat.read().rsplit(b")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
                return True
    return False


async def _stop_group(process: Process) -> None:
    """SIGTERM to the command's process group, SIGKILL to what is left after GRACE."""
    pgid = process.pid  # a new session: the shell leads its group
    if not _group_alive(pgid):
        return
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + GRACE
    while time.monotonic() < deadline:
        await asyncio.sleep(0.02)
        if not _group_alive(pgid):
            break
    else:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if process.returncode is None:
        await process.wait()


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def _result(output: CappedOutput, status: str, is_error: bool) -> ToolResult:
    text = output.text()
    if text and not text.endswith("\n"):
        text += "\n"
    return ToolResult(f"{text}{status}", is_error)
