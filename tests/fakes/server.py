"""A loopback fake LLM provider for tests: OpenAI, Anthropic and Gemini wire formats.

Standard library only. Binds 127.0.0.1 on a free port and serves from a background
thread. Point real litellm at it with ``api_base``:

    openai/NAME          api_base=fake.openai_base   -> POST /v1/chat/completions
    anthropic/claude-*   api_base=fake.base_url      -> POST /v1/messages
    gemini/NAME          api_base=fake.base_url      -> POST /models/NAME:streamGenerateContent?alt=sse
                                                        (and :generateContent; /v1beta/... also accepted)

Each request consumes one queued item (a ``Reply`` or a ``Fault``), whatever its
format; with an empty queue the reply is ``Reply(text="ok")``. See README.md.
"""

from __future__ import annotations

import collections
import json
import re
import select
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterator
from urllib.parse import parse_qs, urlsplit

from tests.fakes.items import ANTHROPIC, GEMINI, OPENAI, Fault, Received, Reply
from tests.fakes.validate import validate_pairs
from tests.fakes.wire import _FULL, _STREAM, _Malformed

__all__ = ["FakeProvider", "Reply", "Fault", "Received", "validate_pairs"]


# --------------------------------------------------------------------------- HTTP


def _classify(path: str, body: dict) -> tuple[str | None, str, bool]:
    """(format, model, stream) from the request path and body."""
    route = urlsplit(path).path
    if route.endswith("/chat/completions"):
        return OPENAI, str(body.get("model", "")), bool(body.get("stream"))
    if route.endswith("/messages"):
        return ANTHROPIC, str(body.get("model", "")), bool(body.get("stream"))
    m = re.search(r"/models/([^/:]+):(streamGenerateContent|generateContent)$", route)
    if m:
        return GEMINI, m.group(1), m.group(2) == "streamGenerateContent"
    return None, "", False


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "_Server"

    def log_message(self, format, *args):  # noqa: A002 - silence stderr logging
        pass

    # -- plumbing --------------------------------------------------------------

    def _read_body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            data = b""
            while True:
                size = int(self.rfile.readline().strip().split(b";")[0] or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send_json(self, status: int, body: Any, headers: dict | None = None) -> None:
        if isinstance(body, (bytes, bytearray)):
            data, ctype = bytes(body), "application/octet-stream"
        elif isinstance(body, str):
            data, ctype = body.encode(), "text/plain; charset=utf-8"
        else:
            data, ctype = json.dumps(body).encode(), "application/json"
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.send_header("x-request-id", "req_fake")
        self.send_header("request-id", "req_fake")
        for k, v in (headers or {}).items():
            self.send_header(k, str(v))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()
        self.close_connection = True

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _client_gone(self) -> bool:
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            if not readable:
                return False
            return self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def _abort(self) -> None:
        """Close the socket without finishing the chunked body (RST)."""
        self.close_connection = True
        try:
            self.wfile.flush()
        except OSError:
            pass
        try:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        except OSError:
            pass
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    # -- requests --------------------------------------------------------------

    def do_GET(self):  # noqa: N802
        self._send_json(404, {"error": {"message": f"fake provider: no route GET {self.path}"}})

    def do_POST(self):  # noqa: N802
        raw = self._read_body()
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {"_raw": raw.decode("utf-8", "replace")}
        fmt, model, stream = _classify(self.path, body if isinstance(body, dict) else {})
        if fmt is None:
            self._send_json(404, {"error": {"message": f"fake provider: no route POST {self.path}"}})
            return
        fake = self.server.fake
        received = {k.lower(): v for k, v in self.headers.items()}
        item, n = fake._take(Received(self.path, body, received, fmt, model, stream))
        try:
            if isinstance(item, Fault):
                status, headers, err = item.render(fmt, model, presented_key(received, self.path))
                self._send_json(status, err, headers)
            elif stream:
                self._stream(item, fmt, model, n)
            else:
                self._send_json(200, _FULL[fmt](item, model, n, fake._ids))
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _stream(self, reply: Reply, fmt: str, model: str, n: int) -> None:
        fake = self.server.fake
        events = _STREAM[fmt](reply, model, n, fake._ids)
        cut, action = None, None
        for limit, what in ((reply.drop_after, "drop"), (reply.malformed_after, "malformed"),
                            (reply.stall_after, "stall")):
            if limit is not None and (cut is None or limit < cut):
                cut, action = limit, what

        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.send_header("x-request-id", "req_fake")
        self.send_header("request-id", "req_fake")
        self.end_headers()
        self.close_connection = True

        pieces = 0
        for name, payload, is_piece in events:
            if is_piece and cut is not None and pieces >= cut:
                break
            if is_piece and reply.chunk_delay:
                if fake._stop.wait(reply.chunk_delay):
                    return self._abort()
            self._chunk(_sse(name, payload))
            pieces += is_piece
        else:
            if cut is None or action is None:
                self._chunk(b"")  # zero-length chunk: end of body
                return
            # Fewer pieces than the cut: still perform the fault at the end.

        if action == "drop":
            self._abort()
        elif action == "malformed":
            name = "content_block_delta" if fmt == ANTHROPIC else None
            self._chunk(_sse(name, _Malformed))
            self._chunk(b"")
        elif action == "stall":
            deadline = time.monotonic() + reply.stall_seconds
            while time.monotonic() < deadline:
                if fake._stop.wait(0.05) or self._client_gone():
                    break
            self._abort()


def _sse(name: str | None, payload: Any) -> bytes:
    if payload is _Malformed:
        data = '{"this is": not json'
    elif isinstance(payload, str):
        data = payload
    else:
        data = json.dumps(payload)
    head = f"event: {name}\n" if name else ""
    return f"{head}data: {data}\n\n".encode()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = False
    fake: "FakeProvider"


# --------------------------------------------------------------------------- FakeProvider


class FakeProvider:
    """A loopback fake of the three providers' HTTP APIs. Use as a (async) context manager."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queue: collections.deque = collections.deque()
        self.requests: list[Received] = []
        self._stop = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._n = 0
        self._id_counter = 0
        self._responder = None

    # ids for tool calls: call_1, call_2 ... / toolu_1 ... (one counter per fake)
    def _next_id(self) -> int:
        with self._lock:
            self._id_counter += 1
            return self._id_counter

    @property
    def _ids(self) -> Iterator[int]:
        return iter(self._next_id, None)

    # -- lifecycle -------------------------------------------------------------

    def start(self) -> "FakeProvider":
        if self._server is not None:
            return self
        self._stop.clear()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.fake = self
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fake-provider", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is None:
            return
        self._stop.set()
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> "FakeProvider":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    async def __aenter__(self) -> "FakeProvider":
        return self.start()

    async def __aexit__(self, *exc) -> None:
        self.stop()

    # -- addresses -------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("FakeProvider is not running")
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        """api_base for anthropic/... and gemini/... models."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base(self) -> str:
        """api_base for openai/... models."""
        return self.base_url + "/v1"

    # -- script ----------------------------------------------------------------

    def queue(self, *items: Reply | Fault) -> "FakeProvider":
        for item in items:
            if not isinstance(item, (Reply, Fault)):
                raise TypeError(f"queue() takes Reply or Fault, not {type(item).__name__}")
        with self._lock:
            self._queue.extend(items)
        return self

    def respond(self, responder) -> "FakeProvider":
        """Answer by content: `responder(received)` returns the Reply or Fault for that
        request, or None to take the next queued item (concurrent requests arrive in any
        order, so a queue cannot say which reply goes to which). Called on the server's
        thread."""
        with self._lock:
            self._responder = responder
        return self

    @property
    def pending(self) -> int:
        """Queued items not yet consumed."""
        with self._lock:
            return len(self._queue)

    def clear(self) -> None:
        """Forget the queue and the recorded requests."""
        with self._lock:
            self._queue.clear()
            self.requests.clear()

    def _take(self, received: Received) -> tuple[Reply | Fault, int]:
        with self._lock:
            self.requests.append(received)
            self._n += 1
            n, responder = self._n, self._responder
            if responder is None:
                return (self._queue.popleft() if self._queue else Reply(text="ok")), n
        item = responder(received)  # outside the lock: it may take its time
        if item is None:
            with self._lock:
                item = self._queue.popleft() if self._queue else Reply(text="ok")
        return item, n


def presented_key(headers: dict, path: str) -> str:
    """The API key a request carried (headers with lower-case names): a bearer token,
    x-api-key, x-goog-api-key or ?key=."""
    bearer = headers.get("authorization", "")
    if bearer.lower().startswith("bearer "):
        return bearer[7:]
    return (headers.get("x-api-key") or headers.get("x-goog-api-key")
            or (parse_qs(urlsplit(path).query).get("key") or [""])[0])
