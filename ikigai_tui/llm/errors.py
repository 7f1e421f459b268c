"""Provider failures -> retry or one clear line saying what to do. No litellm import here."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass

# The variables that hold each provider's key, the one to name first: litellm reads any
# of them (and fails every request of that provider when none is set, api_base or not).
KEY_VARIABLES: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",), "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"), "mistral": ("MISTRAL_API_KEY",),
    "groq": ("GROQ_API_KEY",), "openrouter": ("OPENROUTER_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",), "xai": ("XAI_API_KEY",), "cohere": ("COHERE_API_KEY",),
}
# How providers (through litellm) say that no key was given at all.
_NO_KEY = re.compile(
    r"missing credentials|api_key client option must be set|missing \w+ api key"
    r"|no api key|api key (?:is )?(?:required|not (?:set|found|provided))", re.I)


def key_variable(provider: str) -> str:
    return KEY_VARIABLES.get(provider, (f"{provider.upper()}_API_KEY",))[0]


def missing_key(model: str, env: Mapping[str, str] | None = None) -> str | None:
    """The variable to set when `model`'s provider needs a key and none is set."""
    variables = KEY_VARIABLES.get(provider_of(model))
    env = os.environ if env is None else env
    if variables is None or any(env.get(v) for v in variables):
        return None
    return variables[0]


def _any_value(api_base: str | None) -> str:
    return " (any value, if the server at the api_base does not check it)" if api_base else ""


def no_key_message(model: str, variable: str, api_base: str | None = None) -> str:
    """One line: what is missing and how to fix it."""
    return (f"{variable} is not set: set it{_any_value(api_base)} to use {model}, "
            "or switch with /model (offline works with no key)")


def no_key_warning(model: str, variable: str, api_base: str | None = None) -> str:
    """One line, said when `model` is chosen without its key: what will fail, and why."""
    return (f"Warning: {variable} is not set: messages to {model} will fail until it is"
            f"{_any_value(api_base)}.")
# Anything shaped like a credential is cut out of messages before they are shown or stored.
_SECRET = re.compile(r"(sk-[A-Za-z0-9_\-*]{8,}|AIza[0-9A-Za-z_\-]{20,}|Bearer\s+\S+|x-api-key\S*)")


_SECRET_VARIABLE = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD)$", re.I)


def _secret_values() -> list[str]:
    """The credentials in the environment: providers echo them back (OpenAI's 401 does)."""
    values = {v for k, v in os.environ.items() if _SECRET_VARIABLE.search(k) and len(v) >= 4}
    return sorted(values, key=len, reverse=True)


def redact(text: str) -> str:
    """Cut credentials out of a message before it is shown or stored."""
    for value in _secret_values():
        text = text.replace(value, "[redacted]")
    return _SECRET.sub("[redacted]", text)


def one_line(text: str, limit: int = 200) -> str:
    """The text on one line, at most `limit` characters, cut between words (never in
    the middle of a name or a variable)."""
    line = " ".join(str(text).split())
    if len(line) <= limit:
        return line
    cut = line[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:-") + "…"


def provider_of(model: str) -> str:
    return model.split("/", 1)[0] if "/" in model else model


@dataclass(frozen=True)
class Failure:
    retryable: bool
    message: str
    retry_after: float | None = None


_RETRY_DELAY = re.compile(r"retryDelay\W+(\d+(?:\.\d+)?)s")


def retry_after_seconds(exc: BaseException) -> float | None:
    """The server's retry-after, in seconds: a header, or Gemini's RetryInfo.retryDelay."""
    found = _RETRY_DELAY.search(str(exc))
    if found:
        return float(found.group(1))
    for source in (getattr(exc, "litellm_response_headers", None),
                   getattr(getattr(exc, "response", None), "headers", None)):
        if not source:
            continue
        try:
            value = source.get("retry-after") or source.get("Retry-After")
        except AttributeError:
            continue
        if value is None:
            continue
        try:
            return max(0.0, float(value))
        except ValueError:
            from email.utils import parsedate_to_datetime  # rare: not at start-up

            parsed = parsedate_to_datetime(str(value)) if value else None
            if parsed is not None:
                return max(0.0, parsed.timestamp() - time.time())
    return None


def classify(exc: BaseException, model: str, timeout: float) -> Failure:
    """Decide what a provider exception means for the user."""
    name = type(exc).__name__
    status = getattr(exc, "status_code", None)
    detail = one_line(redact(str(getattr(exc, "message", None) or exc)))
    provider = provider_of(model)
    if name == "ContextWindowExceededError" or re.search(
        r"context.?length|context window|too long|maximum context|token count", detail, re.I
    ) and status == 400:
        return Failure(False, f"the request is too long for {model}'s context window; "
                              "shrink it with /clear, /rewind or /forget")
    if _NO_KEY.search(detail):  # litellm reports a missing key as a 500 for some providers
        return Failure(False, no_key_message(model, key_variable(provider)))
    if name == "AuthenticationError" or status in (401, 403) or name == "PermissionDeniedError":
        variable = key_variable(provider)
        return Failure(False, f"{provider} rejected the credentials: check {variable} ({detail})")
    if name == "NotFoundError" or status == 404:
        return Failure(False, f"{provider} does not know model '{model}': check the name, "
                              "or switch with /model")
    if name in ("Timeout", "_StreamTimeout") or status == 408:
        return Failure(True, f"no response from {provider} within {timeout:g}s")
    if name == "RateLimitError" or status == 429:
        return Failure(True, f"rate limited by {provider}", retry_after_seconds(exc))
    if status == 529 or "overloaded" in detail.lower():
        return Failure(True, f"{provider} is overloaded", retry_after_seconds(exc))
    if isinstance(status, int) and status >= 500 or name in (
        "InternalServerError", "ServiceUnavailableError", "BadGatewayError", "APIConnectionError",
    ):
        return Failure(True, f"{provider} failed ({status or name}): {detail}",
                       retry_after_seconds(exc))
    if name in ("BadRequestError", "UnprocessableEntityError", "UnsupportedParamsError"):
        return Failure(False, f"{provider} refused the request: {detail}")
    return Failure(False, f"{provider} error ({name}): {detail}")
