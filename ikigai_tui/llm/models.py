"""Model limits and prices from litellm's bundled model map, read as data (litellm is not
imported)."""

from __future__ import annotations

import functools
import importlib.util
import json
import re
from pathlib import Path

from ikigai_tui.core.tokens.limits import MAX_OUTPUT_RESERVE, Limits
from ikigai_tui.core.usage.ledger import Prices

OFFLINE_LIMITS = (200_000, 8_192)
UNKNOWN_LIMITS = (128_000, 4_096)  # a custom or unlisted model: assume a common size

# The providers' published limits (input, output) of models the pinned map lacks, by the
# provider and a pattern of the model's name: Anthropic's Claude 3 family (200K), Google's
# Gemini 1.5 Pro (2M), 1.5 Flash and 2.0 Flash (1M). The map, when it lists a model, wins.
PUBLISHED: tuple[tuple[frozenset[str], re.Pattern[str], tuple[int, int]], ...] = (
    (frozenset({"anthropic"}), re.compile(r"claude-3-(opus|sonnet|haiku)(-\d{8}|-latest)?"),
     (200_000, 4_096)),
    (frozenset({"anthropic"}), re.compile(r"claude-3-[57]-(sonnet|haiku)(-\d{8}|-latest)?"),
     (200_000, 8_192)),
    (frozenset({"gemini", "vertex_ai"}), re.compile(r"gemini-1\.5-pro(-\d{3}|-latest)?"),
     (2_097_152, 8_192)),
    (frozenset({"gemini", "vertex_ai"}),
     re.compile(r"gemini-(1\.5-flash(-8b)?|2\.0-flash(-lite)?)(-\d{3}|-latest)?"),
     (1_048_576, 8_192)),
)


def _limits(limit_in: int, limit_out: int, known: bool, source: str = "map") -> Limits:
    """The reply's room is the model's output limit, at most MAX_OUTPUT_RESERVE."""
    return Limits(limit_in, min(limit_out, MAX_OUTPUT_RESERVE), known, source)


def published_limits(model: str) -> tuple[int, int] | None:
    """The provider's published (input, output) limits of `model` ("provider/name"), for
    the few the pinned map lacks; None for any other."""
    provider, _, name = model.partition("/")
    for providers, pattern, limits in PUBLISHED:
        if provider in providers and pattern.fullmatch(name):
            return limits
    return None


def _map_path() -> Path | None:
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0]) / "model_prices_and_context_window_backup.json"


@functools.lru_cache(maxsize=1)
def _model_map() -> dict:
    path = _map_path()
    try:
        return json.loads(path.read_text(encoding="utf-8")) if path is not None else {}
    except (OSError, ValueError):
        return {}


def _top_level_at(text: str, quoted: str) -> int:
    """Where the object of the top-level key `quoted` (a JSON string) begins in the map's
    text, the last one if given twice (as json.loads keeps it); -1 if none. A top-level
    key starts its line and is followed by an object."""
    end = len(text)
    while (at := text.rfind(quoted, 0, end)) >= 0:
        end = at
        before = text[text.rfind("\n", 0, at) + 1:at]
        after = text[at + len(quoted):at + len(quoted) + 8].lstrip()
        if not before.strip() and after.startswith(":") and after[1:].lstrip().startswith("{"):
            return text.index("{", at + len(quoted))
    return -1


def find_entries(raw: bytes, keys: tuple[str, ...]) -> list[dict | None] | None:
    """The entries `keys` of the map's text `raw`, each parsed alone; None when `raw` is
    not a JSON object (then the whole map is parsed instead)."""
    text = raw.decode("utf-8", "replace")
    if not text.lstrip().startswith("{"):
        return None
    decoder = json.JSONDecoder()
    found: list[dict | None] = []
    for key in keys:
        start = _top_level_at(text, json.dumps(key))
        if start < 0:
            found.append(None)
            continue
        try:
            entry, _ = decoder.raw_decode(text, start)
        except ValueError:
            return None
        found.append(entry if isinstance(entry, dict) else None)
    return found


@functools.lru_cache(maxsize=64)
def _entries(keys: tuple[str, ...]) -> tuple[dict | None, ...]:
    """The map's entries of `keys`. The whole map is 3 MB of JSON, ~25 ms to parse, on the
    event loop when the first refresh asks a provider model's limits; a model's own entry,
    found in the text and parsed alone, takes ~1 ms (the whole map once a name's
    suggestions have needed it)."""
    if _model_map.cache_info().currsize == 0:
        path = _map_path()
        try:
            raw = path.read_bytes() if path is not None else b""
        except OSError:
            raw = b""
        found = find_entries(raw, keys) if raw else [None] * len(keys)
        if found is not None:
            return tuple(found)
    table = _model_map()
    return tuple(table.get(key) for key in keys)


def _entry(model: str) -> dict | None:
    """The map's entry for `model` ("provider/name", or the name under its provider)."""
    provider, _, name = model.partition("/")
    for key, info in zip((model, name), _entries((model, name))):
        if info and (key == model or info.get("litellm_provider", "").startswith(provider)):
            return info
    return None


def published_full_name(bare: str) -> str | None:
    """The full name of a bare name of the published table (`claude-3-opus-20240229` ->
    anthropic/claude-3-opus-20240229), or None."""
    for provider in ("anthropic", "gemini"):
        if published_limits(f"{provider}/{bare}") is not None:
            return f"{provider}/{bare}"
    return None


def model_limits(model: str) -> Limits:
    if model == "offline":
        return _limits(*OFFLINE_LIMITS, True, "offline")
    info = _entry(model)
    if info:
        limit_in = info.get("max_input_tokens") or info.get("max_tokens")
        limit_out = info.get("max_output_tokens") or info.get("max_tokens") or UNKNOWN_LIMITS[1]
        if limit_in:
            return _limits(int(limit_in), int(limit_out), True)
    if (published := published_limits(model)) is not None:
        return _limits(*published, True, "published")
    return _limits(*UNKNOWN_LIMITS, False, "assumed")


def model_prices(model: str) -> Prices | None:
    """US dollars per input and output token, from the same map; None when it has none
    (a custom or unlisted model: its cost is unknown). The offline model is free."""
    if model == "offline":
        return Prices(0.0, 0.0)
    info = _entry(model)
    if not info:
        return None
    rate_in, rate_out = info.get("input_cost_per_token"), info.get("output_cost_per_token")
    if not isinstance(rate_in, (int, float)) or not isinstance(rate_out, (int, float)):
        return None
    above_in = info.get("input_cost_per_token_above_200k_tokens")
    above_out = info.get("output_cost_per_token_above_200k_tokens")
    return Prices(float(rate_in), float(rate_out),
                  float(above_in) if isinstance(above_in, (int, float)) else None,
                  float(above_out) if isinstance(above_out, (int, float)) else None)
