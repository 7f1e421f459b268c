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
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterator
from urllib.parse import urlsplit

__all__ = ["FakeProvider", "Reply", "Fault", "Received", "validate_pairs"]

OPENAI, ANTHROPIC, GEMINI = "openai", "anthropic", "gemini"


# --------------------------------------------------------------------------- items


@dataclass
class Reply:
    """One model reply, serialized in whichever format the request asks for.

    text        the assistant text (may be empty)
    tool_calls  list of (name, args_dict) or (name, args_dict, id) tuples
    usage       (prompt_tokens, completion_tokens)
    chunk_size  split text into pieces of this many characters; None = by words
    stop_reason None = "stop"/"tool_calls" as fits; "length" = output truncated
                (openai "length", anthropic "max_tokens", gemini "MAX_TOKENS")
    chunk_delay seconds to sleep before each content piece
    drop_after      send this many content pieces, then close the socket mid-body
    malformed_after send this many content pieces, then an SSE event whose data is
                    not JSON, then end the body
    stall_after     send this many content pieces, then hang for stall_seconds (or
                    until the client disconnects or the server stops), then close

    A "content piece" is one text piece or one tool-call fragment (an argument piece;
    for Gemini a whole functionCall). The opening events (OpenAI role chunk, Anthropic
    message_start / content_block_start) are always sent before the first piece.
    """

    text: str = ""
    tool_calls: list = field(default_factory=list)
    usage: tuple[int, int] = (10, 5)
    chunk_size: int | None = None
    stop_reason: str | None = None
    chunk_delay: float = 0.0
    drop_after: int | None = None
    malformed_after: int | None = None
    stall_after: int | None = None
    stall_seconds: float = 30.0


@dataclass
class Fault:
    """An HTTP error reply. Build with the class methods; ``status`` is per format."""

    kind: str
    retry_after: float | None = None
    message: str | None = None
    # Generic fault (Fault.http): same status/body/headers for every format.
    status: int | None = None
    body: Any = None
    headers: dict = field(default_factory=dict)

    @classmethod
    def rate_limit(cls, retry_after: float | None = 1) -> "Fault":
        """429 with a ``retry-after`` header (seconds) when retry_after is not None."""
        return cls("rate_limit", retry_after=retry_after)

    @classmethod
    def server_error(cls) -> "Fault":
        """500."""
        return cls("server_error")

    @classmethod
    def overloaded(cls) -> "Fault":
        """Anthropic 529 overloaded_error; OpenAI 503; Gemini 503 UNAVAILABLE."""
        return cls("overloaded")

    @classmethod
    def auth(cls) -> "Fault":
        """401 with the provider's authentication error body."""
        return cls("auth")

    @classmethod
    def not_found(cls) -> "Fault":
        """404: unknown model."""
        return cls("not_found")

    @classmethod
    def context_length(cls) -> "Fault":
        """400 with the provider's context-length-exceeded error."""
        return cls("context_length")

    @classmethod
    def http(cls, status: int, body: Any = None, headers: dict | None = None) -> "Fault":
        """Any status with a literal body (dict -> JSON, str/bytes as is) for every format."""
        return cls("http", status=status, body=body, headers=dict(headers or {}))

    # -- rendering -------------------------------------------------------------

    def render(self, fmt: str, model: str) -> tuple[int, dict, dict]:
        """(status, headers, body) for this fault in format ``fmt``."""
        headers: dict = {}
        if self.retry_after is not None:
            headers["retry-after"] = _num(self.retry_after)
        if self.kind == "http":
            headers.update(self.headers)
            return self.status or 500, headers, self.body
        status, body = _ERRORS[self.kind][fmt](self, model)
        return status, headers, body


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def _openai_err(message, type_, code=None, param=None):
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


def _anthropic_err(type_, message):
    return {"type": "error", "error": {"type": type_, "message": message}}


def _gemini_err(code, message, status, details=None):
    err = {"code": code, "message": message, "status": status}
    if details:
        err["details"] = details
    return {"error": err}


_ERRORS = {
    "rate_limit": {
        OPENAI: lambda f, m: (429, _openai_err(
            f.message or f"Rate limit reached for {m} on requests per min (RPM): Limit 3, Used 3, "
            "Requested 1. Please try again in 1s.", "requests", "rate_limit_exceeded")),
        ANTHROPIC: lambda f, m: (429, _anthropic_err(
            "rate_limit_error", f.message or "Number of request tokens has exceeded your "
            "per-minute rate limit")),
        GEMINI: lambda f, m: (429, _gemini_err(
            429, f.message or "Resource has been exhausted (e.g. check quota).", "RESOURCE_EXHAUSTED",
            ([{"@type": "type.googleapis.com/google.rpc.RetryInfo",
               "retryDelay": f"{_num(f.retry_after)}s"}] if f.retry_after is not None else None))),
    },
    "server_error": {
        OPENAI: lambda f, m: (500, _openai_err(
            f.message or "The server had an error while processing your request. Sorry about that!",
            "server_error")),
        ANTHROPIC: lambda f, m: (500, _anthropic_err("api_error", f.message or "Internal server error")),
        GEMINI: lambda f, m: (500, _gemini_err(
            500, f.message or "An internal error has occurred. Please retry or report in "
            "https://developers.generativeai.google/guide/troubleshooting", "INTERNAL")),
    },
    "overloaded": {
        OPENAI: lambda f, m: (503, _openai_err(
            f.message or "The engine is currently overloaded, please try again later.", "server_error")),
        ANTHROPIC: lambda f, m: (529, _anthropic_err("overloaded_error", f.message or "Overloaded")),
        GEMINI: lambda f, m: (503, _gemini_err(
            503, f.message or "The model is overloaded. Please try again later.", "UNAVAILABLE")),
    },
    "auth": {
        OPENAI: lambda f, m: (401, _openai_err(
            f.message or "Incorrect API key provided: test-key. You can find your API key at "
            "https://platform.openai.com/account/api-keys.", "invalid_request_error", "invalid_api_key")),
        ANTHROPIC: lambda f, m: (401, _anthropic_err("authentication_error", f.message or "invalid x-api-key")),
        GEMINI: lambda f, m: (401, _gemini_err(
            401, f.message or "Request had invalid authentication credentials. API key not valid. "
            "Please pass a valid API key.", "UNAUTHENTICATED")),
    },
    "not_found": {
        OPENAI: lambda f, m: (404, _openai_err(
            f.message or f"The model `{m}` does not exist or you do not have access to it.",
            "invalid_request_error", "model_not_found")),
        ANTHROPIC: lambda f, m: (404, _anthropic_err("not_found_error", f.message or f"model: {m}")),
        GEMINI: lambda f, m: (404, _gemini_err(
            404, f.message or f"models/{m} is not found for API version v1beta, or is not supported "
            "for generateContent. Call ListModels to see the list of available models and their "
            "supported methods.", "NOT_FOUND")),
    },
    "context_length": {
        OPENAI: lambda f, m: (400, _openai_err(
            f.message or "This model's maximum context length is 128000 tokens. However, your "
            "messages resulted in 250000 tokens. Please reduce the length of the messages.",
            "invalid_request_error", "context_length_exceeded", "messages")),
        ANTHROPIC: lambda f, m: (400, _anthropic_err(
            "invalid_request_error", f.message or "prompt is too long: 250000 tokens > 200000 maximum")),
        GEMINI: lambda f, m: (400, _gemini_err(
            400, f.message or "The input token count (2500000) exceeds the maximum number of tokens "
            "allowed (1048576).", "INVALID_ARGUMENT")),
    },
}


@dataclass
class Received:
    """One request as the fake saw it. ``headers`` keys are lower-case."""

    path: str  # raw request path, query string included
    body: dict
    headers: dict
    format: str  # "openai" | "anthropic" | "gemini"
    model: str = ""
    stream: bool = False


# --------------------------------------------------------------------------- serialization


def _split_text(text: str, size: int | None) -> list[str]:
    if not text:
        return []
    if size and size > 0:
        return [text[i:i + size] for i in range(0, len(text), size)]
    return re.findall(r"^\s+|\S+\s*", text)


def _split_args(args_json: str, size: int | None) -> list[str]:
    """At least two pieces."""
    if size and size > 0 and len(args_json) > size:
        return [args_json[i:i + size] for i in range(0, len(args_json), size)]
    if len(args_json) < 2:
        return [args_json, ""]
    n = 3 if len(args_json) >= 3 else 2
    step = -(-len(args_json) // n)
    return [args_json[i:i + step] for i in range(0, len(args_json), step)]


class _Malformed:
    """Marker event: the stream writes data that is not JSON here."""


def _tool_calls(reply: Reply, ids: Iterator[int], prefix: str) -> list[tuple[str, dict, str]]:
    out = []
    for tc in reply.tool_calls:
        name, args = tc[0], tc[1]
        tc_id = tc[2] if len(tc) > 2 and tc[2] else f"{prefix}{next(ids)}"
        out.append((name, dict(args or {}), tc_id))
    return out


def _openai_stream(reply: Reply, model: str, n: int, ids) -> list:
    calls = _tool_calls(reply, ids, "call_")
    base = {"id": f"chatcmpl-fake{n}", "object": "chat.completion.chunk",
            "created": int(time.time()), "model": model, "system_fingerprint": "fp_fake"}

    def chunk(delta, finish=None):
        return dict(base, choices=[{"index": 0, "delta": delta, "logprobs": None,
                                    "finish_reason": finish}])

    ev = [(None, chunk({"role": "assistant", "content": ""}), False)]
    for piece in _split_text(reply.text, reply.chunk_size):
        ev.append((None, chunk({"content": piece}), True))
    for i, (name, args, tc_id) in enumerate(calls):
        ev.append((None, chunk({"tool_calls": [{"index": i, "id": tc_id, "type": "function",
                                                "function": {"name": name, "arguments": ""}}]}), True))
        for piece in _split_args(json.dumps(args), reply.chunk_size):
            ev.append((None, chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}), True))
    finish = reply.stop_reason or ("tool_calls" if calls else "stop")
    ev.append((None, chunk({}, finish), False))
    p, c = reply.usage
    ev.append((None, dict(base, choices=[], usage={"prompt_tokens": p, "completion_tokens": c,
                                                  "total_tokens": p + c}), False))
    ev.append((None, "[DONE]", False))
    return ev


def _openai_full(reply: Reply, model: str, n: int, ids) -> dict:
    calls = _tool_calls(reply, ids, "call_")
    msg: dict = {"role": "assistant", "content": reply.text or None, "refusal": None}
    if calls:
        msg["tool_calls"] = [{"id": i, "type": "function",
                              "function": {"name": name, "arguments": json.dumps(args)}}
                             for name, args, i in calls]
    finish = reply.stop_reason or ("tool_calls" if calls else "stop")
    p, c = reply.usage
    return {"id": f"chatcmpl-fake{n}", "object": "chat.completion", "created": int(time.time()),
            "model": model, "system_fingerprint": "fp_fake",
            "choices": [{"index": 0, "message": msg, "logprobs": None, "finish_reason": finish}],
            "usage": {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}}


def _anthropic_stop(reply: Reply, calls) -> str:
    if reply.stop_reason == "length":
        return "max_tokens"
    if reply.stop_reason:
        return reply.stop_reason
    return "tool_use" if calls else "end_turn"


def _anthropic_stream(reply: Reply, model: str, n: int, ids) -> list:
    calls = _tool_calls(reply, ids, "toolu_")
    p, c = reply.usage
    ev = [("message_start", {"type": "message_start", "message": {
        "id": f"msg_fake{n}", "type": "message", "role": "assistant", "model": model,
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": p, "output_tokens": 1}}}, False)]
    index = 0
    if reply.text:
        ev.append(("content_block_start", {"type": "content_block_start", "index": index,
                                           "content_block": {"type": "text", "text": ""}}, False))
        for piece in _split_text(reply.text, reply.chunk_size):
            ev.append(("content_block_delta", {"type": "content_block_delta", "index": index,
                                               "delta": {"type": "text_delta", "text": piece}}, True))
        ev.append(("content_block_stop", {"type": "content_block_stop", "index": index}, False))
        index += 1
    for name, args, tc_id in calls:
        ev.append(("content_block_start", {"type": "content_block_start", "index": index,
                                           "content_block": {"type": "tool_use", "id": tc_id,
                                                             "name": name, "input": {}}}, False))
        for piece in _split_args(json.dumps(args), reply.chunk_size):
            ev.append(("content_block_delta", {"type": "content_block_delta", "index": index,
                                               "delta": {"type": "input_json_delta",
                                                         "partial_json": piece}}, True))
        ev.append(("content_block_stop", {"type": "content_block_stop", "index": index}, False))
        index += 1
    ev.append(("message_delta", {"type": "message_delta",
                                 "delta": {"stop_reason": _anthropic_stop(reply, calls),
                                           "stop_sequence": None},
                                 "usage": {"output_tokens": c}}, False))
    ev.append(("message_stop", {"type": "message_stop"}, False))
    return ev


def _anthropic_full(reply: Reply, model: str, n: int, ids) -> dict:
    calls = _tool_calls(reply, ids, "toolu_")
    content: list = []
    if reply.text:
        content.append({"type": "text", "text": reply.text})
    for name, args, tc_id in calls:
        content.append({"type": "tool_use", "id": tc_id, "name": name, "input": args})
    p, c = reply.usage
    return {"id": f"msg_fake{n}", "type": "message", "role": "assistant", "model": model,
            "content": content, "stop_reason": _anthropic_stop(reply, calls), "stop_sequence": None,
            "usage": {"input_tokens": p, "output_tokens": c}}


def _gemini_parts(reply: Reply) -> list[dict]:
    parts = [{"text": t} for t in _split_text(reply.text, reply.chunk_size)]
    for tc in reply.tool_calls:
        parts.append({"functionCall": {"name": tc[0], "args": dict(tc[1] or {})}})
    return parts


def _gemini_finish(reply: Reply) -> str:
    if reply.stop_reason == "length":
        return "MAX_TOKENS"
    return reply.stop_reason.upper() if reply.stop_reason else "STOP"


def _gemini_usage(reply: Reply) -> dict:
    p, c = reply.usage
    return {"promptTokenCount": p, "candidatesTokenCount": c, "totalTokenCount": p + c}


def _gemini_stream(reply: Reply, model: str, n: int, ids) -> list:
    parts = _gemini_parts(reply) or [{"text": ""}]
    ev = []
    for i, part in enumerate(parts):
        cand: dict = {"content": {"role": "model", "parts": [part]}, "index": 0}
        payload: dict = {"candidates": [cand], "modelVersion": model, "responseId": f"fake{n}"}
        if i == len(parts) - 1:
            cand["finishReason"] = _gemini_finish(reply)
            payload["usageMetadata"] = _gemini_usage(reply)
        ev.append((None, payload, True))
    return ev


def _gemini_full(reply: Reply, model: str, n: int, ids) -> dict:
    parts = [{"text": reply.text}] if reply.text else []
    parts += [{"functionCall": {"name": tc[0], "args": dict(tc[1] or {})}} for tc in reply.tool_calls]
    return {"candidates": [{"content": {"role": "model", "parts": parts or [{"text": ""}]},
                            "finishReason": _gemini_finish(reply), "index": 0}],
            "usageMetadata": _gemini_usage(reply), "modelVersion": model, "responseId": f"fake{n}"}


_STREAM = {OPENAI: _openai_stream, ANTHROPIC: _anthropic_stream, GEMINI: _gemini_stream}
_FULL = {OPENAI: _openai_full, ANTHROPIC: _anthropic_full, GEMINI: _gemini_full}


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
        item, n = fake._take(Received(self.path, body, {k.lower(): v for k, v in self.headers.items()},
                                      fmt, model, stream))
        try:
            if isinstance(item, Fault):
                status, headers, err = item.render(fmt, model)
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
            item = self._queue.popleft() if self._queue else Reply(text="ok")
            return item, self._n


# --------------------------------------------------------------------------- validation


def _guess_format(body: dict) -> str:
    if "contents" in body:
        return GEMINI
    msgs = body.get("messages") or []
    for m in msgs:
        if m.get("role") in ("tool", "system", "developer") or m.get("tool_calls"):
            return OPENAI
        c = m.get("content")
        if isinstance(c, list) and any(isinstance(b, dict) and b.get("type") in ("tool_use", "tool_result")
                                       for b in c):
            return ANTHROPIC
    return ANTHROPIC if "system" in body else OPENAI  # top-level "system" is Anthropic's


def validate_pairs(received: Received | dict, format: str | None = None) -> list[str]:  # noqa: A002
    """Tool call / tool result pairing problems in a request body. Empty list = valid.

    ``received`` is a Received (its format is used) or a raw body dict (format given or guessed).
    """
    if isinstance(received, Received):
        body, fmt = received.body, format or received.format
    else:
        body, fmt = received, format or _guess_format(received)
    if fmt == OPENAI:
        return _validate_openai(body.get("messages") or [])
    if fmt == ANTHROPIC:
        return _validate_anthropic(body.get("messages") or [])
    if fmt == GEMINI:
        return _validate_gemini(body.get("contents") or [])
    raise ValueError(f"unknown format {fmt!r}")


def _validate_openai(msgs: list) -> list[str]:
    problems: list[str] = []
    i = 0
    while i < len(msgs):
        m = msgs[i]
        role = m.get("role")
        if role == "assistant" and m.get("tool_calls"):
            ids = [tc.get("id") for tc in m["tool_calls"]]
            for dup in {x for x in ids if ids.count(x) > 1}:
                problems.append(f"message {i}: duplicate tool call id {dup!r}")
            pending = list(dict.fromkeys(ids))
            j = i + 1
            while j < len(msgs) and msgs[j].get("role") == "tool":
                tcid = msgs[j].get("tool_call_id")
                if tcid in pending:
                    pending.remove(tcid)
                else:
                    problems.append(f"message {j}: tool result {tcid!r} without its call")
                j += 1
            for tcid in pending:
                problems.append(f"message {i}: tool call {tcid!r} without its result")
            i = j
            continue
        if role == "tool":
            problems.append(f"message {i}: tool result {m.get('tool_call_id')!r} without its call")
        i += 1
    return problems


def _blocks(content) -> list[dict]:
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


# litellm 1.105 replaces an assistant content "" by this text block when it converts to Anthropic.
_LITELLM_EMPTY_PLACEHOLDER = "[System: Empty message content sanitised"


def _validate_anthropic(msgs: list) -> list[str]:
    problems: list[str] = []
    expected: list = []  # tool_use ids from the previous assistant message
    prev_index = -1
    for i, m in enumerate(msgs):
        role, content = m.get("role"), m.get("content")
        blocks = _blocks(content)
        if role == "assistant":
            if expected:
                for tid in expected:
                    problems.append(f"message {prev_index}: tool_use {tid!r} without its tool_result")
            if content == "" or (isinstance(content, list) and not content):
                problems.append(f"message {i}: assistant message with empty content")
            for b in blocks:
                if b.get("type") == "text" and b.get("text", "") == "":
                    problems.append(f"message {i}: assistant message with an empty text block")
                if b.get("type") == "text" and b.get("text", "").startswith(_LITELLM_EMPTY_PLACEHOLDER):
                    problems.append(f"message {i}: assistant content was \"\" (litellm replaced it "
                                    "with a placeholder text block); send content=None")
            ids = [b.get("id") for b in blocks if b.get("type") == "tool_use"]
            for dup in {x for x in ids if ids.count(x) > 1}:
                problems.append(f"message {i}: duplicate tool_use id {dup!r}")
            expected, prev_index = list(dict.fromkeys(ids)), i
            continue
        # user (or anything else)
        results = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
        for rid in results:
            if rid in expected:
                expected.remove(rid)
            else:
                problems.append(f"message {i}: tool_result {rid!r} without its tool_use")
        for tid in expected:
            problems.append(f"message {prev_index}: tool_use {tid!r} without its tool_result")
        expected = []
    for tid in expected:
        problems.append(f"message {prev_index}: tool_use {tid!r} without its tool_result")
    return problems


def _validate_gemini(contents: list) -> list[str]:
    problems: list[str] = []
    expected: list[str] = []
    prev_index = -1
    for i, c in enumerate(contents):
        parts = [p for p in (c.get("parts") or []) if isinstance(p, dict)]
        # litellm writes the proto field names in snake_case; the REST docs use camelCase.
        calls = [(p.get("functionCall") or p.get("function_call") or {}).get("name")
                 for p in parts if "functionCall" in p or "function_call" in p]
        responses = [(p.get("functionResponse") or p.get("function_response") or {}).get("name")
                     for p in parts if "functionResponse" in p or "function_response" in p]
        for name in responses:
            if name in expected:
                expected.remove(name)
            else:
                problems.append(f"content {i}: functionResponse {name!r} without its functionCall")
        for name in expected:
            problems.append(f"content {prev_index}: functionCall {name!r} without its functionResponse")
        expected = []
        if calls:
            expected, prev_index = list(calls), i
    for name in expected:
        problems.append(f"content {prev_index}: functionCall {name!r} without its functionResponse")
    return problems
