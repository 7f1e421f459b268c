"""MCP servers as tool providers, through the official `mcp` SDK: the adapter behind the
core's ToolServers port (core/tools/servers.py).

The SDK (about 0.9 s to import) is loaded in a worker thread when the first server
starts, never at start-up, and only when a server is configured. Each server runs in a
task of its own (the SDK's streams and task groups belong to the task that opened them):
it connects (a child process over stdio, or streamable HTTP), initialises, lists its
tools, then waits to be stopped. Calls come from the turns' tasks. A server that fails
to start, dies, or does not answer a call within its timeout is marked failed, with the
reason; its tools go away until it is restarted.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import tempfile
from collections.abc import Mapping, Sequence
from typing import Any

from ikigai_tui.core.tools.servers import (
    FAILED, NOT_STARTED, RUNNING, STARTING, STOPPED, CallOutcome, ServerConfig, ServerState,
    ServerTool, parameters_of,
)
from ikigai_tui.mcp_servers.results import render
from ikigai_tui.support.secrets import mask

log = logging.getLogger(__name__)

STOP_GRACE = 3.0  # seconds a server's task may take to close before it is cancelled
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")


class StartError(Exception):
    """Why a server did not start, in one line."""


def expand(value: str, environ: Mapping[str, str]) -> str:
    """`$VAR` and `${VAR}` from ikigai's environment (a key named in the config, not
    written in it); StartError when one is not set."""

    def one(match: re.Match) -> str:
        name = match.group(1) or match.group(2)
        if name not in environ:
            raise StartError(f"${name} is not set in ikigai's environment")
        return environ[name]

    return _VARIABLE.sub(one, value)


def leaf(exc: BaseException) -> BaseException:
    """The first exception inside the task groups' exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def reason(exc: BaseException) -> str:
    """One line for an exception."""
    exc = leaf(exc)
    if isinstance(exc, (TimeoutError, asyncio.TimeoutError)):
        return "no answer in time"
    if getattr(exc, "code", None) == -32000:  # the SDK's CONNECTION_CLOSED
        return "it exited or closed its connection"
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _sdk() -> Any:
    """The SDK's modules this adapter uses (imported in a worker thread), and those it
    imports at its first call (jsonschema, to check a result against the tool's output
    schema: 0.1 s that would stall the screen)."""
    import jsonschema  # noqa: F401
    import mcp
    import mcp.client.stdio
    import mcp.client.streamable_http
    import mcp_types  # noqa: F401

    return mcp


class _Server:
    """One configured server: its state, and while it runs, its task and SDK session."""

    def __init__(self, config: ServerConfig, base_dir: str, environ: Mapping[str, str]) -> None:
        self.config = config
        self.base_dir = base_dir
        self.environ = environ
        self.state = NOT_STARTED
        self.detail = ""
        self.tools: tuple[ServerTool, ...] = ()
        self.session: Any = None
        self.runner: asyncio.Task | None = None
        self.stop_event: asyncio.Event | None = None
        self.stderr: Any = None  # a stdio server's error output (an unnamed temporary file)
        self.secrets: tuple[str, ...] = ()  # the env and header values given to it

    def snapshot(self) -> ServerState:
        return ServerState(self.config, self.state, self.detail, self.tools)

    def error_output_size(self) -> int:
        if self.stderr is None:
            return 0
        try:
            self.stderr.flush()
            return os.fstat(self.stderr.fileno()).st_size
        except (OSError, ValueError):
            return 0

    def last_error_line(self, since: int = 0) -> str:
        """The last line the server wrote to its error output (after byte `since`),
        masked: a server that failed often says why there."""
        if self.stderr is None:
            return ""
        try:
            size = self.error_output_size()
            self.stderr.seek(max(since, size - 4096))
            lines = [line.strip() for line in self.stderr.read().splitlines() if line.strip()]
        except (OSError, ValueError):
            return ""
        return mask(lines[-1][:300], self.secrets) if lines else ""

    def transport(self, sdk: Any) -> Any:
        """The SDK's client transport (an async context manager) for this server."""
        c = self.config
        if c.url:
            import httpx2

            headers = {k: expand(v, self.environ) for k, v in c.headers.items()}
            self.secrets = tuple(v for v in headers.values() if v)
            client = httpx2.AsyncClient(headers=headers,
                                        timeout=httpx2.Timeout(c.timeout, read=max(c.timeout, 300.0)))
            return sdk.client.streamable_http.streamable_http_client(c.url, http_client=client)
        env = {k: expand(v, self.environ) for k, v in c.env.items()}
        self.secrets = tuple(v for v in env.values() if len(v) >= 8)
        cwd = os.path.join(self.base_dir, os.path.expanduser(c.cwd)) if c.cwd else self.base_dir
        if not os.path.isdir(cwd):
            raise StartError(f"its folder {cwd} does not exist")
        params = sdk.StdioServerParameters(command=c.command[0], args=list(c.command[1:]),
                                           env=env, cwd=cwd)
        self.stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
        return sdk.client.stdio.stdio_client(params, errlog=self.stderr)

    async def run(self, sdk: Any, ready: asyncio.Future) -> None:
        """Connect, initialise and list the tools (then `ready` has them), and hold the
        connection until stopped. Whatever fails before `ready` is its exception."""
        try:
            async with contextlib.AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(self.transport(sdk))
                session = await stack.enter_async_context(
                    sdk.ClientSession(read, write,
                                      read_timeout_seconds=self.config.startup_timeout))
                await session.initialize()
                tools = await _list_tools(session, self.config.name)
                self.session = session
                ready.set_result(tools)
                assert self.stop_event is not None
                await self.stop_event.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else StartError("stopped"))
            if isinstance(exc, asyncio.CancelledError):
                raise
            log.info("MCP server %s ended: %r", self.config.name, exc)
        finally:
            self.session = None


async def _list_tools(session: Any, server: str) -> tuple[ServerTool, ...]:
    """Every page of the server's tools."""
    tools: list[ServerTool] = []
    cursor = None
    for _ in range(100):  # a server that pages forever is cut off
        if cursor is None:
            listing = await session.list_tools()
        else:
            from mcp_types import PaginatedRequestParams

            listing = await session.list_tools(params=PaginatedRequestParams(cursor=cursor))
        for tool in listing.tools:
            tools.append(ServerTool(server, tool.name, tool.description or "",
                                    parameters_of(tool.input_schema)))
        cursor = listing.next_cursor
        if not cursor:
            break
    return tuple(tools)


class McpServers:
    """The configured servers (ToolServers): started together at the first turn that
    offers tools, stopped with the program."""

    def __init__(self, configs: Sequence[ServerConfig], *, base_dir: str | None = None,
                 environ: Mapping[str, str] | None = None) -> None:
        base = base_dir or os.getcwd()
        env = os.environ if environ is None else environ
        self._servers = {c.name: _Server(c, base, env) for c in configs}
        self.version = 0
        self._sdk: Any = None
        self._starting: asyncio.Task | None = None
        self._ending: set[asyncio.Task] = set()  # failed servers' clean-ups, not waited for

    def states(self) -> list[ServerState]:
        return [s.snapshot() for s in self._servers.values()]

    async def _load(self) -> Any:
        if self._sdk is None:
            self._sdk = await asyncio.to_thread(_sdk)
        return self._sdk

    async def start(self) -> list[str]:
        """Start every server not tried yet, at once (two turns starting together share
        the one start); the lines of those that failed."""
        waiting = [s for s in self._servers.values() if s.state == NOT_STARTED]
        if self._starting is not None and not self._starting.done():
            await asyncio.shield(self._starting)
            return []
        if not waiting:
            return []
        self._starting = asyncio.ensure_future(self._start_all(waiting))
        return await asyncio.shield(self._starting)

    async def _start_all(self, servers: list[_Server]) -> list[str]:
        for server in servers:
            server.state = STARTING
        lines = await asyncio.gather(*(self._start(s) for s in servers))
        return [line for line in lines if line]

    async def _start(self, server: _Server) -> str | None:
        """Start one server; its failure line, or None."""
        server.state, server.detail, server.tools = STARTING, "", ()
        name, timeout = server.config.name, server.config.startup_timeout
        try:
            sdk = await self._load()
            server.stop_event = asyncio.Event()
            ready: asyncio.Future = asyncio.get_running_loop().create_future()
            # Read here, or by no one when the wait below gave up first.
            ready.add_done_callback(lambda f: f.cancelled() or f.exception())
            server.runner = asyncio.ensure_future(server.run(sdk, ready))
            tools = await asyncio.wait_for(asyncio.shield(ready), timeout)
        except BaseException as exc:
            if isinstance(exc, asyncio.CancelledError):
                await self._stop(server, graceful=False)
                server.state, server.detail = NOT_STARTED, ""
                raise
            why = reason(exc)
            if isinstance(exc, (TimeoutError, asyncio.TimeoutError)):
                why = f"it did not answer within {timeout:g}s"
            said = server.last_error_line()
            if said and said not in why:
                why = f"{why} (it said: {said})"
            self._stop_soon(server)
            server.state, server.detail = FAILED, why
            self.version += 1
            return (f"MCP server '{name}' failed to start: {why}; its tools are off until "
                    f"/mcp restart {name}")
        server.state, server.tools = RUNNING, tools
        self.version += 1
        return None

    async def _stop(self, server: _Server, graceful: bool = True) -> None:
        """End the server's task: told to stop (its connection closes, the SDK ends the
        process), or at once when it is not running anyway, or does not stop in time."""
        task, server.runner = server.runner, None
        if server.stop_event is not None:
            server.stop_event.set()
        if task is not None and not task.done():
            done = set()
            if graceful:
                done, _ = await asyncio.wait([task], timeout=STOP_GRACE)
            if not done:
                task.cancel()
                await asyncio.wait([task], timeout=STOP_GRACE)
        if server.stderr is not None:
            server.stderr.close()
            server.stderr = None

    def _stop_soon(self, server: _Server) -> None:
        """Stop a failed server without waiting (the SDK gives a stuck process seconds to
        end): the turn goes on; `close` waits for it."""
        task = asyncio.ensure_future(self._stop(server, graceful=False))
        self._ending.add(task)
        task.add_done_callback(self._ending.discard)

    async def restart(self, name: str) -> ServerState:
        server = self._servers[name]
        await self._stop(server)
        server.state = NOT_STARTED
        self.version += 1
        line = await self._start(server)
        if line is not None:
            log.info("%s", line)
        return server.snapshot()

    async def call(self, server_name: str, tool: str, arguments: dict[str, Any]) -> CallOutcome:
        from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        server = self._servers.get(server_name)
        session = server.session if server is not None else None
        if server is None or server.state != RUNNING or session is None:
            return CallOutcome(f"Error: MCP server '{server_name}' is not running "
                               f"(/mcp restart {server_name})", True)
        sdk = self._sdk
        said_before = server.error_output_size()
        try:
            result = await session.call_tool(tool, arguments,
                                             read_timeout_seconds=server.config.timeout)
        except sdk.MCPError as exc:
            if exc.code == REQUEST_TIMEOUT:
                return await self._down(server, session, tool,
                                        f"did not answer within {server.config.timeout:g}s")
            if exc.code == CONNECTION_CLOSED:
                return await self._down(server, session, tool,
                                        "exited or closed its connection", said_before)
            return CallOutcome(mask(f"Error from MCP server '{server_name}': {exc}", server.secrets),
                               True)
        except Exception as exc:  # a broken stream or transport: the server is gone
            return await self._down(server, session, tool, reason(exc), said_before)
        return CallOutcome(mask(render(result), server.secrets), bool(result.is_error))

    async def _down(self, server: _Server, session: Any, tool: str, why: str,
                    said_since: int | None = None) -> CallOutcome:
        """The server failed during a call: it is stopped and its tools go away (unless
        a restart replaced its session meanwhile). A server that died may have said why
        on its error output (what it wrote since byte `said_since`)."""
        name = server.config.name
        said = server.last_error_line(said_since) if said_since is not None else ""
        said = f" (it said: {said})" if said else ""
        if server.session is session and server.state == RUNNING:
            server.state, server.detail, server.tools = FAILED, f"{why} during {tool}{said}", ()
            self.version += 1
            self._stop_soon(server)
        line = (f"MCP server '{name}' {why} during {tool}{said}; its tools are off until "
                f"/mcp restart {name}")
        return CallOutcome(f"Error: {line}", True, line)

    async def close(self) -> None:
        """Stop every server (the program is leaving)."""
        starting = self._starting
        if starting is not None and not starting.done():
            starting.cancel()
            await asyncio.wait([starting])
        servers = [s for s in self._servers.values() if s.runner is not None]
        await asyncio.gather(*(self._stop(s) for s in servers), *self._ending,
                             return_exceptions=True)
        for server in servers:
            server.state, server.tools = STOPPED, ()
        self.version += 1
