"""A fake MCP server for the tests, written with the `mcp` SDK (its MCPServer).

    python tests/fakes/mcp_server.py [--http PORT] [--hang-on-start] [--crash-on-start]
                                     [--prefix P] [--many N]

stdio by default; `--http PORT` serves streamable HTTP on 127.0.0.1:PORT at /mcp.
`--hang-on-start` never answers (it does not read its input); `--crash-on-start` writes
a line to its error output and exits 3 before answering. Its tools:

- echo(text): the text back; add(a, b): their sum (structured content, as JSON text)
- fail(why): an error result (is_error) saying why
- crash(): the process exits at once, mid-call
- hang(seconds): sleeps that long, then answers "woke"
- picture(): a text block, an image block and a resource link
- resource(): an embedded text resource and an embedded blob
- getenv(name): the variable's value in the server's environment, or "<unset>"
- cwd(): the server's working folder; pid(): its process id
- big(n): n characters of text
- `--many N` adds tool_0 .. tool_{N-1} (for a long /mcp listing)
"""

from __future__ import annotations

import base64
import os
import sys
import time

from mcp.server.mcpserver import MCPServer
from mcp_types import (
    BlobResourceContents, EmbeddedResource, ImageContent, ResourceLink, TextContent,
    TextResourceContents,
)

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 2040).decode()


def build(prefix: str = "", many: int = 0) -> MCPServer:
    app = MCPServer("fake-mcp")

    @app.tool(name=prefix + "echo")
    def echo(text: str) -> str:
        """Say the text back."""
        return text

    @app.tool(name=prefix + "add")
    def add(a: int, b: int) -> int:
        """Add two whole numbers."""
        return a + b

    @app.tool(name=prefix + "fail")
    def fail(why: str) -> str:
        """Always fails, with the reason given."""
        raise ValueError(f"failed on purpose: {why}")

    @app.tool(name=prefix + "crash")
    def crash() -> str:
        """Kill the server mid-call."""
        sys.stderr.write("fake-mcp: crashing now\n")
        sys.stderr.flush()
        os._exit(3)

    @app.tool(name=prefix + "hang")
    async def hang(seconds: float = 3600) -> str:
        """Sleep, then answer."""
        import anyio

        await anyio.sleep(seconds)
        return "woke"

    @app.tool(name=prefix + "picture")
    def picture() -> list:
        """A picture with a caption and a link."""
        return [TextContent(type="text", text="A caption."),
                ImageContent(type="image", data=PNG, mime_type="image/png"),
                ResourceLink(type="resource_link", uri="file:///tmp/plot.png", name="plot",
                             mime_type="image/png")]

    @app.tool(name=prefix + "resource")
    def resource() -> list:
        """An embedded text resource and a binary one."""
        return [EmbeddedResource(type="resource", resource=TextResourceContents(
                    uri="file:///notes.txt", mime_type="text/plain", text="the notes' text")),
                EmbeddedResource(type="resource", resource=BlobResourceContents(
                    uri="file:///data.bin", mime_type="application/octet-stream",
                    blob=base64.b64encode(b"\1\2\3" * 100).decode()))]

    @app.tool(name=prefix + "getenv")
    def getenv(name: str) -> str:
        """A variable of the server's environment."""
        return os.environ.get(name, "<unset>")

    @app.tool(name=prefix + "cwd")
    def cwd() -> str:
        """The server's working folder."""
        return os.getcwd()

    @app.tool(name=prefix + "pid")
    def pid() -> str:
        """The server's process id."""
        return str(os.getpid())

    @app.tool(name=prefix + "big")
    def big(n: int) -> str:
        """n characters of text."""
        return "x" * n

    for i in range(many):
        def numbered(i: int = i) -> str:
            return f"tool {i}"
        app.tool(name=f"{prefix}tool_{i}", description=f"Numbered tool {i}.")(numbered)
    return app


def main(argv: list[str]) -> None:
    def option(name: str, default: str) -> str:
        return argv[argv.index(name) + 1] if name in argv else default

    if "--crash-on-start" in argv:
        sys.stderr.write("fake-mcp: cannot start (told to crash)\n")
        sys.exit(3)
    if "--hang-on-start" in argv:
        time.sleep(3600)
    app = build(option("--prefix", ""), int(option("--many", "0")))
    if "--http" in argv:
        app.run("streamable-http", host="127.0.0.1", port=int(option("--http", "0")))
    else:
        app.run()


if __name__ == "__main__":
    main(sys.argv[1:])
