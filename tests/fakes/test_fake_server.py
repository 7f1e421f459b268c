"""The fake provider, exercised through real litellm over loopback HTTP.

These tests also pin what litellm 1.105.3 turns each fault into (class, status_code,
where it is raised, where retry-after is readable): README.md records the table and
the app's retry logic relies on it. If a litellm upgrade changes the table, these fail.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
import urllib.error
import urllib.request

import tests.fakes.litellm_harness  # noqa: F401, I001  (first: sets litellm's environment)
import litellm
import pytest
from litellm.exceptions import MidStreamFallbackError  # (not exported as litellm.X)
from litellm.llms.custom_httpx.http_handler import AsyncHTTPHandler

from tests.fakes.litellm_harness import FORMATS, GUARD, MODELS, TOOLS, api_base
from tests.fakes.server import Fault, FakeProvider, Received, Reply


class Outcome:
    def __init__(self):
        self.chunks: list = []
        self.exc: BaseException | None = None
        self.stage: str | None = None  # "acompletion" | "iteration" | None
        self.elapsed = 0.0

    @property
    def text(self) -> str:
        return "".join(c.choices[0].delta.content or "" for c in self.chunks if c.choices)

    @property
    def content_chunks(self) -> list:
        return [c for c in self.chunks if c.choices and c.choices[0].delta.content]

    @property
    def finish_reasons(self) -> list:
        return [c.choices[0].finish_reason for c in self.chunks if c.choices and c.choices[0].finish_reason]

    @property
    def usage(self):
        found = [c.usage for c in self.chunks if getattr(c, "usage", None)]
        return found[-1] if found else None

    def tool_calls(self) -> list[tuple[str | None, str, str]]:
        """(id, name, arguments) reassembled from the streamed fragments."""
        calls: dict[int, list] = {}
        for c in self.chunks:
            if not c.choices:
                continue
            for tc in c.choices[0].delta.tool_calls or []:
                slot = calls.setdefault(tc.index, [None, "", ""])
                if tc.id:
                    slot[0] = tc.id
                if tc.function and tc.function.name:
                    slot[1] += tc.function.name
                if tc.function and tc.function.arguments:
                    slot[2] += tc.function.arguments
        return [tuple(calls[i]) for i in sorted(calls)]


async def stream(fake, fmt, *, timeout=5, messages=None, **kw) -> Outcome:
    out = Outcome()
    t0 = time.monotonic()

    async def run():
        try:
            resp = await litellm.acompletion(
                model=MODELS[fmt], messages=messages or [{"role": "user", "content": "hi"}],
                stream=True, api_base=api_base(fake, fmt), api_key="test-key", timeout=timeout,
                stream_options={"include_usage": True}, **kw)
        except Exception as e:  # noqa: BLE001
            out.exc, out.stage = e, "acompletion"
            return
        try:
            async for chunk in resp:
                out.chunks.append(chunk)
        except Exception as e:  # noqa: BLE001
            out.exc, out.stage = e, "iteration"

    await asyncio.wait_for(run(), GUARD)
    out.elapsed = time.monotonic() - t0
    return out


def retry_after(exc) -> str | None:
    """Where litellm 1.105.3 keeps the provider's retry-after header (see README.md)."""
    inner = getattr(exc, "original_exception", None) or exc  # Gemini: MidStreamFallbackError wraps
    headers = getattr(inner, "litellm_response_headers", None) or {}
    return headers.get("retry-after")


# --------------------------------------------------------------------------- the server itself


def test_binds_loopback_on_a_free_port():
    with FakeProvider() as a, FakeProvider() as b:
        assert a.base_url.startswith("http://127.0.0.1:")
        assert a.openai_base == a.base_url + "/v1"
        assert a.port != b.port
        assert a._server.server_address[0] == "127.0.0.1"
        port = a.port
    with pytest.raises(OSError):  # stopped: nothing listens any more
        socket.create_connection(("127.0.0.1", port), timeout=1).close()


def test_raw_routes_default_reply_and_unknown_path(fake):
    def post(path, body):
        req = urllib.request.Request(fake.base_url + path, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=5) as r:
            return json.loads(r.read())

    # Gemini with a /v1beta prefix, unstreamed; empty queue -> Reply(text="ok").
    got = post("/v1beta/models/gemini-x:generateContent", {"contents": []})
    assert got["candidates"][0]["content"]["parts"] == [{"text": "ok"}]
    fake.queue(Reply(text="hey", tool_calls=[("slash", {"command": "mark"})]))
    got = post("/v1/chat/completions", {"model": "m", "messages": []})
    assert got["choices"][0]["message"]["tool_calls"][0]["id"] == "call_1"
    assert [r.format for r in fake.requests] == ["gemini", "openai"]
    assert fake.requests[0].model == "gemini-x" and not fake.requests[0].stream
    with pytest.raises(urllib.error.HTTPError) as err:
        post("/nowhere", {})
    assert err.value.code == 404
    assert len(fake.requests) == 2  # unknown routes are not recorded and consume nothing


# --------------------------------------------------------------------------- replies via litellm


@pytest.mark.parametrize("fmt", FORMATS)
async def test_streamed_text_reassembles(fake, fmt):
    fake.queue(Reply(text="Hello there, streaming world!", chunk_size=3))
    out = await stream(fake, fmt)
    assert out.exc is None, out.exc
    assert out.text == "Hello there, streaming world!"
    assert len(out.content_chunks) >= 9
    assert out.finish_reasons[-1] == "stop"
    [req] = fake.requests
    assert isinstance(req, Received) and req.format == fmt and req.stream
    assert req.headers  # lower-cased names
    assert all(k == k.lower() for k in req.headers)
    expected_path = {"openai": "/v1/chat/completions", "anthropic": "/v1/messages",
                     "gemini": "/models/gemini-2.5-flash:streamGenerateContent?alt=sse"}[fmt]
    assert req.path == expected_path


@pytest.mark.parametrize("fmt", FORMATS)
async def test_streamed_tool_call_and_usage(fake, fmt):
    fake.queue(Reply(text="Marking.", tool_calls=[("slash", {"command": "mark", "args": "A"})],
                     usage=(12, 5), chunk_size=3))
    out = await stream(fake, fmt, tools=TOOLS)
    assert out.exc is None, out.exc
    assert out.text == "Marking."
    [(tc_id, name, args)] = out.tool_calls()
    assert name == "slash"
    assert json.loads(args) == {"command": "mark", "args": "A"}
    if fmt == "openai":
        assert tc_id == "call_1"
    elif fmt == "anthropic":
        assert tc_id == "toolu_1"
    else:  # Gemini has no ids: litellm invents a random one
        assert tc_id and tc_id.startswith("call_")
    assert out.finish_reasons[-1] == "tool_calls"
    assert (out.usage.prompt_tokens, out.usage.completion_tokens, out.usage.total_tokens) == (12, 5, 17)
    assert fake.requests[0].body  # the tools went out
    assert "slash" in json.dumps(fake.requests[0].body)


@pytest.mark.parametrize("fmt", FORMATS)
async def test_unstreamed_reply(fake, fmt):
    fake.queue(Reply(text="Plain.", tool_calls=[("slash", {"command": "x"})], usage=(7, 3)))
    resp = await asyncio.wait_for(litellm.acompletion(
        model=MODELS[fmt], messages=[{"role": "user", "content": "hi"}], api_base=api_base(fake, fmt),
        api_key="test-key", timeout=5, tools=TOOLS, max_retries=0), GUARD)
    msg = resp.choices[0].message
    assert msg.content == "Plain."
    assert msg.tool_calls[0].function.name == "slash"
    assert json.loads(msg.tool_calls[0].function.arguments) == {"command": "x"}
    assert (resp.usage.prompt_tokens, resp.usage.completion_tokens) == (7, 3)
    assert not fake.requests[0].stream


async def test_queue_is_shared_across_formats_and_defaults_to_ok(fake):
    fake.queue(Reply(text="one"), Reply(text="two"))
    assert (await stream(fake, "gemini")).text == "one"
    assert (await stream(fake, "anthropic")).text == "two"
    assert (await stream(fake, "openai")).text == "ok"
    assert [r.format for r in fake.requests] == ["gemini", "anthropic", "openai"]
    assert fake.pending == 0


# --------------------------------------------------------------------------- faults via litellm

# fault -> format -> (exception class, status_code, inner class for MidStreamFallbackError or None)
# Always with max_retries=0 (see test_openai_retries_internally_by_default).
FAULT_TABLE = {
    "rate_limit": {"openai": ("RateLimitError", 429, None),
                   "anthropic": ("RateLimitError", 429, None),
                   "gemini": ("MidStreamFallbackError", 429, "RateLimitError")},
    "server_error": {"openai": ("InternalServerError", 500, None),
                     "anthropic": ("InternalServerError", 500, None),
                     "gemini": ("MidStreamFallbackError", 500, "InternalServerError")},
    "overloaded": {"openai": ("ServiceUnavailableError", 503, None),
                   "anthropic": ("InternalServerError", 500, None),
                   "gemini": ("MidStreamFallbackError", 500, "InternalServerError")},
    "auth": {f: ("AuthenticationError", 401, None) for f in FORMATS},
    "not_found": {f: ("NotFoundError", 404, None) for f in FORMATS},
    "context_length": {f: ("ContextWindowExceededError", 400, None) for f in FORMATS},
}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("fault", list(FAULT_TABLE))
async def test_fault_maps_to_litellm_exception(fake, fmt, fault):
    fake.queue(getattr(Fault, fault)())
    out = await stream(fake, fmt, max_retries=0)
    cls_name, status, inner = FAULT_TABLE[fault][fmt]
    assert out.exc is not None, f"no exception; text={out.text!r}"
    assert type(out.exc).__name__ == cls_name, repr(out.exc)
    assert isinstance(out.exc, getattr(litellm.exceptions, cls_name))
    assert out.exc.status_code == status
    assert not out.chunks
    # Gemini opens the HTTP request lazily: every error surfaces from the first `async for`.
    assert out.stage == ("iteration" if fmt == "gemini" else "acompletion")
    if inner:
        assert type(out.exc.original_exception).__name__ == inner
        assert out.exc.is_pre_first_chunk is True
    assert len(fake.requests) == 1
    if fault == "context_length":
        assert isinstance(out.exc, litellm.BadRequestError)
    if fault == "overloaded" and fmt == "anthropic":
        assert "overloaded_error" in str(out.exc)  # 529 becomes status_code 500: only the text tells


@pytest.mark.parametrize("fmt", FORMATS)
async def test_retry_after_is_readable(fake, fmt):
    fake.queue(Fault.rate_limit(retry_after=7))
    out = await stream(fake, fmt, max_retries=0)
    assert retry_after(out.exc) == "7"
    # Not on exc.response.headers: litellm rebuilds that response without the headers.
    assert "retry-after" not in out.exc.response.headers


async def test_openai_retries_internally_by_default(fake):
    # Without max_retries=0 the OpenAI SDK retries 429/5xx itself (2 retries, honouring
    # retry-after): here the retry consumes the default "ok" reply. Anthropic/Gemini do not.
    fake.queue(Fault.server_error())
    out = await stream(fake, "openai")
    assert out.exc is None and out.text == "ok"
    assert len(fake.requests) == 2


# --------------------------------------------------------------------------- mid-stream failures


def _inner(exc):
    return type(getattr(exc, "original_exception", None)).__name__


@pytest.mark.parametrize("fmt", FORMATS)
async def test_drop_mid_stream(fake, fmt):
    fake.queue(Reply(text="partial text here", drop_after=2))
    out = await stream(fake, fmt, max_retries=0)
    assert out.text == "partial text "
    assert out.stage == "iteration"
    assert isinstance(out.exc, MidStreamFallbackError), repr(out.exc)
    assert _inner(out.exc) == "APIConnectionError"
    assert out.exc.status_code == 500
    assert out.exc.is_pre_first_chunk is False
    assert out.exc.generated_content == "partial text "


@pytest.mark.parametrize("fmt", FORMATS)
async def test_malformed_event_mid_stream(fake, fmt):
    fake.queue(Reply(text="partial text here", malformed_after=2, usage=(50, 40)))
    out = await stream(fake, fmt, max_retries=0)
    assert out.text == "partial text "
    if fmt == "openai":
        assert isinstance(out.exc, MidStreamFallbackError), repr(out.exc)
        assert _inner(out.exc) == "APIConnectionError"
        assert out.exc.status_code == 500
    else:
        # litellm skips the bad event, then ends the stream as if complete: no exception,
        # a synthesized finish_reason "stop", and usage that is litellm's own estimate.
        assert out.exc is None
        assert out.finish_reasons == ["stop"]
        assert out.usage.completion_tokens != 40


@pytest.mark.parametrize("fmt", ["openai", "anthropic"])
async def test_stall_mid_stream_times_out(fake, fmt):
    fake.queue(Reply(text="partial text here", stall_after=2, stall_seconds=30))
    out = await stream(fake, fmt, timeout=2, max_retries=0)
    assert out.text == "partial text "
    assert isinstance(out.exc, MidStreamFallbackError), repr(out.exc)
    assert _inner(out.exc) == "APIConnectionError"
    assert "Timeout" in str(out.exc)
    assert 1.5 < out.elapsed < 6


async def test_gemini_stream_ignores_timeout(fake):
    # litellm's Gemini streaming path does not pass timeout= to its HTTP client: a stall
    # lasts until the server gives up (here after 3 s), whatever the timeout.
    fake.queue(Reply(text="partial text here", stall_after=2, stall_seconds=3))
    out = await stream(fake, "gemini", timeout=1, max_retries=0)
    assert out.text == "partial text "
    assert isinstance(out.exc, MidStreamFallbackError), repr(out.exc)
    assert _inner(out.exc) == "APIConnectionError"
    assert out.elapsed > 2.5


async def test_gemini_stall_times_out_with_own_client(fake):
    # Passing client=AsyncHTTPHandler(timeout=...) does bound the Gemini stream read.
    fake.queue(Reply(text="partial text here", stall_after=2, stall_seconds=30))
    client = AsyncHTTPHandler(timeout=2)
    try:
        out = await stream(fake, "gemini", timeout=2, max_retries=0, client=client)
    finally:
        await client.close()
    assert out.text == "partial text "
    assert isinstance(out.exc, MidStreamFallbackError), repr(out.exc)
    assert _inner(out.exc) == "APIConnectionError"
    assert "Timeout" in str(out.exc)
    assert 1.5 < out.elapsed < 6


# --------------------------------------------------------------------------- no finish reason


def _raw_stream(fake, fmt, reply) -> str:
    """The SSE body the fake sends for `reply`, read without litellm."""
    fake.queue(reply)
    path, body = {"openai": ("/v1/chat/completions", {"model": "m", "stream": True}),
                  "anthropic": ("/v1/messages", {"model": "m", "stream": True}),
                  "gemini": ("/models/g:streamGenerateContent?alt=sse", {})}[fmt]
    req = urllib.request.Request(fake.base_url + path, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=5) as r:
        return r.read().decode()


@pytest.mark.parametrize("fmt", FORMATS)
def test_no_finish_knob_on_the_wire(fake, fmt):
    told = {"openai": '"finish_reason": "stop"', "anthropic": '"stop_reason": "end_turn"',
            "gemini": '"finishReason": "STOP"'}[fmt]
    complete = _raw_stream(fake, fmt, Reply(text="one two"))
    cut = _raw_stream(fake, fmt, Reply(text="one two", no_finish=True))
    assert told in complete and told not in cut
    assert '"one ' in cut and '"two"' in cut  # the text itself is all there
    if fmt == "openai":
        assert "finish_reason\": \"" not in cut
        assert cut.rstrip().endswith("data: [DONE]") and '"usage"' in cut
    elif fmt == "anthropic":
        assert "message_delta" not in cut and "message_stop" not in cut
        assert "content_block_stop" in cut
    else:
        assert "finishReason" not in cut and "usageMetadata" in cut


@pytest.mark.parametrize("fmt", FORMATS)
async def test_litellm_invents_a_finish_when_none_is_sent(fake, fmt):
    # What litellm 1.105.3 shows for a stream that ends cleanly without a finish reason:
    # the text, no exception, and a made-up finish_reason "stop". OpenAI and Anthropic keep
    # what the provider really sent in CustomStreamWrapper.received_finish_reason (None
    # here); Gemini keeps nothing (None for a complete stream too), so the app reads the
    # wire (ikigai_tui/llm/finish_watch.py).
    seen = {}
    for name, reply in (("complete", Reply(text="one two")),
                        ("cut", Reply(text="one two", no_finish=True)),
                        ("length", Reply(text="one two", stop_reason="length")),
                        ("tools", Reply(tool_calls=[("slash", {"command": "mark"})]))):
        fake.queue(reply)
        resp = await litellm.acompletion(
            model=MODELS[fmt], messages=[{"role": "user", "content": "hi"}], stream=True,
            api_base=api_base(fake, fmt), api_key="test-key", timeout=5, max_retries=0,
            tools=TOOLS)
        finishes = [c.choices[0].finish_reason async for c in resp
                    if c.choices and c.choices[0].finish_reason]
        seen[name] = (finishes, resp.received_finish_reason)
    assert seen["cut"] == (["stop"], None)
    if fmt == "gemini":
        assert seen["complete"] == (["stop"], None)
        assert seen["length"] == (["length"], None)
        assert seen["tools"] == (["tool_calls"], None)
    else:
        assert seen["complete"] == (["stop"], "stop")
        assert seen["length"] == (["length"], "length")
        assert seen["tools"] == (["tool_calls"], "tool_calls")
