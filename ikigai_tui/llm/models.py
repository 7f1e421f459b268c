"""Model limits and prices from litellm's bundled model map, read as data (litellm is not
imported)."""

from __future__ import annotations

import functools
import importlib.util
import json
from pathlib import Path

from ikigai_tui.core.limits import MAX_OUTPUT_RESERVE, Limits
from ikigai_tui.core.usage import Prices

OFFLINE_LIMITS = (200_000, 8_192)
UNKNOWN_LIMITS = (128_000, 4_096)  # a custom or unlisted model: assume a common size


def _limits(limit_in: int, limit_out: int, known: bool) -> Limits:
    """The reply's room is the model's output limit, at most MAX_OUTPUT_RESERVE."""
    return Limits(limit_in, min(limit_out, MAX_OUTPUT_RESERVE), known)


@functools.lru_cache(maxsize=1)
def _model_map() -> dict:
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return {}
    path = Path(list(spec.submodule_search_locations)[0]) / "model_prices_and_context_window_backup.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _entry(model: str) -> dict | None:
    """The map's entry for `model` ("provider/name", or the name under its provider)."""
    provider, _, name = model.partition("/")
    table = _model_map()
    for key in (model, name):
        info = table.get(key)
        if info and (key == model or info.get("litellm_provider", "").startswith(provider)):
            return info
    return None


def model_limits(model: str) -> Limits:
    if model == "offline":
        return _limits(*OFFLINE_LIMITS, True)
    info = _entry(model)
    if info:
        limit_in = info.get("max_input_tokens") or info.get("max_tokens")
        limit_out = info.get("max_output_tokens") or info.get("max_tokens") or UNKNOWN_LIMITS[1]
        if limit_in:
            return _limits(int(limit_in), int(limit_out), True)
    return _limits(*UNKNOWN_LIMITS, False)


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
