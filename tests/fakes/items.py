"""What the fake provider is told to do: replies, faults, and the requests it received."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

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
    no_finish       end the stream cleanly but never say why it ended: OpenAI sends no
                    chunk with a finish_reason (the usage chunk and `data: [DONE]` still
                    follow), Gemini no finishReason on any chunk, Anthropic neither
                    message_delta (stop_reason, usage) nor message_stop

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
    no_finish: bool = False


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

    def render(self, fmt: str, model: str, key: str = "") -> tuple[int, dict, dict]:
        """(status, headers, body) for this fault in format ``fmt``; ``key`` is the API key
        the request presented (the auth fault echoes it)."""
        headers: dict = {}
        if self.retry_after is not None:
            headers["retry-after"] = _num(self.retry_after)
        if self.kind == "http":
            headers.update(self.headers)
            return self.status or 500, headers, self.body
        status, body = _ERRORS[self.kind][fmt](self, model, key)
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
        OPENAI: lambda f, m, key: (429, _openai_err(
            f.message or f"Rate limit reached for {m} on requests per min (RPM): Limit 3, Used 3, "
            "Requested 1. Please try again in 1s.", "requests", "rate_limit_exceeded")),
        ANTHROPIC: lambda f, m, key: (429, _anthropic_err(
            "rate_limit_error", f.message or "Number of request tokens has exceeded your "
            "per-minute rate limit")),
        GEMINI: lambda f, m, key: (429, _gemini_err(
            429, f.message or "Resource has been exhausted (e.g. check quota).", "RESOURCE_EXHAUSTED",
            ([{"@type": "type.googleapis.com/google.rpc.RetryInfo",
               "retryDelay": f"{_num(f.retry_after)}s"}] if f.retry_after is not None else None))),
    },
    "server_error": {
        OPENAI: lambda f, m, key: (500, _openai_err(
            f.message or "The server had an error while processing your request. Sorry about that!",
            "server_error")),
        ANTHROPIC: lambda f, m, key: (500, _anthropic_err("api_error", f.message or "Internal server error")),
        GEMINI: lambda f, m, key: (500, _gemini_err(
            500, f.message or "An internal error has occurred. Please retry or report in "
            "https://developers.generativeai.google/guide/troubleshooting", "INTERNAL")),
    },
    "overloaded": {
        OPENAI: lambda f, m, key: (503, _openai_err(
            f.message or "The engine is currently overloaded, please try again later.", "server_error")),
        ANTHROPIC: lambda f, m, key: (529, _anthropic_err("overloaded_error", f.message or "Overloaded")),
        GEMINI: lambda f, m, key: (503, _gemini_err(
            503, f.message or "The model is overloaded. Please try again later.", "UNAVAILABLE")),
    },
    "auth": {
        # Each echoes the key it was sent, as OpenAI does: the worst case for redaction.
        OPENAI: lambda f, m, key: (401, _openai_err(
            f.message or f"Incorrect API key provided: {key}. You can find your API key at "
            "https://platform.openai.com/account/api-keys.", "invalid_request_error", "invalid_api_key")),
        ANTHROPIC: lambda f, m, key: (401, _anthropic_err(
            "authentication_error", f.message or f"invalid x-api-key: {key}")),
        GEMINI: lambda f, m, key: (401, _gemini_err(
            401, f.message or f"Request had invalid authentication credentials. API key not valid: "
            f"{key}. Please pass a valid API key.", "UNAUTHENTICATED")),
    },
    "not_found": {
        OPENAI: lambda f, m, key: (404, _openai_err(
            f.message or f"The model `{m}` does not exist or you do not have access to it.",
            "invalid_request_error", "model_not_found")),
        ANTHROPIC: lambda f, m, key: (404, _anthropic_err("not_found_error", f.message or f"model: {m}")),
        GEMINI: lambda f, m, key: (404, _gemini_err(
            404, f.message or f"models/{m} is not found for API version v1beta, or is not supported "
            "for generateContent. Call ListModels to see the list of available models and their "
            "supported methods.", "NOT_FOUND")),
    },
    "context_length": {
        OPENAI: lambda f, m, key: (400, _openai_err(
            f.message or "This model's maximum context length is 128000 tokens. However, your "
            "messages resulted in 250000 tokens. Please reduce the length of the messages.",
            "invalid_request_error", "context_length_exceeded", "messages")),
        ANTHROPIC: lambda f, m, key: (400, _anthropic_err(
            "invalid_request_error", f.message or "prompt is too long: 250000 tokens > 200000 maximum")),
        GEMINI: lambda f, m, key: (400, _gemini_err(
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
