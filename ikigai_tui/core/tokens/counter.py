"""Token counting: exact for OpenAI models (tiktoken, offline), estimated elsewhere.

A request is serialized as segments: each message is its role and its texts, plus a
fixed overhead per message (the chat format's framing) and once for reply priming;
tool definitions are their JSON. For OpenAI models every text is encoded with the
model's tiktoken encoding, loaded from the files the litellm wheel ships (never a
download). For other models the count is bytes/4, multiplied by a per-model
correction factor learned from the input tokens each provider reports.

Each message's count is independent of the others, so callers cache it per event id:
adding a message costs only that message.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from ikigai_tui.core.tokens import encoders
from ikigai_tui.core.tokens.encoders import SLICE
from ikigai_tui.core.replay.request import entry_message, message_texts

BYTES_PER_TOKEN = 4
ESTIMATE = "bytes/4"  # the family of estimated counts (kept counts are keyed by it)
MESSAGE_OVERHEAD = 3  # tokens framing each message
REPLY_PRIMING = 3  # tokens priming the reply

_O200K = ("gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4", "chatgpt-4o")
_CL100K = ("gpt-4", "gpt-3.5")


def encoding_name(model: str) -> str | None:
    """The tiktoken encoding of an OpenAI model; None where counts are estimates."""
    provider, _, name = model.partition("/")
    if provider != "openai":
        return None
    if name.startswith(_O200K):
        return "o200k_base"
    if name.startswith(_CL100K):
        return "cl100k_base"
    return None


def message_segments(kind: str, payload: dict) -> tuple[str, ...]:
    """The texts of one context entry as it is sent (the request's own serialisation)."""
    return message_texts(entry_message(kind, payload))


def utf8_length(text: str) -> int:
    """len(text.encode("utf-8")) without a copy of the text when it is ASCII."""
    return len(text) if text.isascii() else sum(
        len(text[i:i + SLICE].encode("utf-8", "surrogatepass")) for i in range(0, len(text), SLICE))


def serialise_tools(tools: Sequence[dict]) -> str:
    """The tool definitions as they are counted: their JSON."""
    return json.dumps(list(tools), sort_keys=True, separators=(",", ":")) if tools else ""


# Tool list -> (the list, its schemas' ids, its text). Every plan counts the tools (their
# JSON is ~10 KB): the registry hands the same list object for a caller until its tools
# change (core/tools: a new list then), so the text is kept by the list's identity. The
# entry holds the list, so its id cannot be reused while kept; the schemas' ids catch a
# list changed in place. Schemas are never edited in place (the registry builds new ones).
_tools_texts: dict[int, tuple[Sequence[dict], tuple[int, ...], str]] = {}


def tools_text(tools: Sequence[dict]) -> str:
    """serialise_tools(tools), serialised once per tool list."""
    if not tools:
        return ""
    schemas = tuple(map(id, tools))
    kept = _tools_texts.get(id(tools))
    if kept is not None and kept[0] is tools and kept[1] == schemas:
        return kept[2]
    text = serialise_tools(tools)
    if len(_tools_texts) >= 16:  # a few lists live at once (one per caller)
        _tools_texts.clear()
    _tools_texts[id(tools)] = (tools, schemas, text)
    return text


class TokenCounter:
    """Counts for one model. `raw` counts are exact tokens for OpenAI models and
    bytes/4 elsewhere; `scale` turns a raw total into the figure shown and budgeted."""

    def __init__(self, model: str, factor: float = 1.0) -> None:
        self.model = model
        self.encoding = encoding_name(model)
        self.exact = self.encoding is not None
        self.factor = 1.0 if self.exact else factor
        # What the raw counts are of: the same for every estimated model (the factor is
        # applied after), so kept counts serve every model of one family.
        self.family = self.encoding or ESTIMATE
        # Made on first use (core/tokens/encoders.py: tiktoken's tables, here or in a worker
        # process, 0.2-0.4 s): callers on the loop load() first, in a thread.
        self._encoder: encoders.Encoder | None = None
        # The few texts outside the log every request holds (system prompt, tools, pins),
        # by text: counted (or read back from the store) once, then looked up.
        self.known: dict[str, float] = {}

    @property
    def loaded(self) -> bool:
        return not self.exact or self._encoder is not None

    def load(self) -> None:
        """Load the encoding (tiktoken and its files): a worker thread's job."""
        if self.exact and self._encoder is None:
            self._encoder = encoders.encoder(self.encoding)

    def text(self, text: str) -> float:
        if not text:
            return 0
        if self.exact:
            if self._encoder is None:
                self.load()
            return self._encoder.count(text)
        return utf8_length(text) / BYTES_PER_TOKEN

    def message(self, kind: str, payload: dict) -> float:
        return MESSAGE_OVERHEAD + sum(self.text(s) for s in message_segments(kind, payload))

    def messages(self, entries: Iterable[tuple[str, dict]]) -> list[float]:
        """The counts of many context entries (kind, payload): a worker thread's job.
        Exact counts are asked of the encoder all at once (one round trip to a worker
        process, not one a text)."""
        if not self.exact:
            message = self.message
            return [message(kind, payload) for kind, payload in entries]
        if self._encoder is None:
            self.load()
        texts = [message_segments(kind, payload) for kind, payload in entries]
        counts = iter(self._encoder.counts([t for segments in texts for t in segments]))
        return [MESSAGE_OVERHEAD + sum(next(counts) for _ in segments) for segments in texts]

    def known_text(self, text: str) -> float:
        """The count of a text outside the log, remembered by text (a few at a time)."""
        count = self.known.get(text)
        if count is None:
            if len(self.known) >= 64:
                self.known.clear()
            count = self.known[text] = self.text(text)
        return count

    def fixed(self, system: str, tools: Sequence[dict], pins: Iterable[str] = ()) -> float:
        """System prompt (with pins) as one message, the tool definitions, reply priming."""
        known = self.known_text
        system_tokens = MESSAGE_OVERHEAD + known("system") + known(system)
        return system_tokens + known(tools_text(tools)) + REPLY_PRIMING

    def scale(self, raw: float) -> int:
        return math.ceil(raw * self.factor - 1e-9)


class Resize(NamedTuple):
    """A request's size now, to tell its size once messages leave it or come back
    exactly as measuring it then will: the raw counts added up first, scaled once.
    (Scaling each message and adding the results counts up to a token more a message.)"""

    tokens: int  # the request's tokens now, as measured
    raw: float  # the part of it counted from messages, unscaled
    factor: float

    def after(self, change_raw: float) -> int:
        """The request's tokens once messages of `change_raw` raw tokens come in (or,
        negative, leave)."""
        scale = self.factor
        now = math.ceil(self.raw * scale - 1e-9)
        then = math.ceil(max(0.0, self.raw + change_raw) * scale - 1e-9)
        return max(0, self.tokens + then - now)


FACTOR_BOUNDS = (1 / 3, 3.0)  # of one observed (reported / estimated) ratio


def learn_factor(factor: float, samples: int, reported: int, raw_estimate: float) -> tuple[float, int]:
    """One more observation of (reported input tokens / raw estimate): a running mean
    at first, then an exponential average so the factor follows a model's drift. An
    observation outside FACTOR_BOUNDS is not one of the tokenizer: bytes/4 is never off
    by 3x for real text, but a report can leave out cached input (Anthropic's
    input_tokens does) or come from a proxy that reports nothing real; learnt, 10 tokens
    reported for an 800-token request would scale every count by 1/80 and keep the
    window from ever pruning. Such observations are ignored."""
    if raw_estimate <= 0 or reported <= 0:
        return factor, samples
    ratio = reported / raw_estimate
    low, high = FACTOR_BOUNDS
    if not low <= ratio <= high:
        return factor, samples
    samples += 1
    weight = max(1 / samples, 0.25)
    return factor + (ratio - factor) * weight, samples
