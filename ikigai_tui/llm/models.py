"""Model limits from litellm's bundled model map, read as data (litellm is not imported)."""

from __future__ import annotations

import functools
import importlib.util
import json
from pathlib import Path

from ikigai_tui.core.limits import MAX_OUTPUT_RESERVE, Limits

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


def model_limits(model: str) -> Limits:
    if model == "offline":
        return _limits(*OFFLINE_LIMITS, True)
    provider, _, name = model.partition("/")
    table = _model_map()
    for key in (model, name):
        info = table.get(key)
        if info and (key == model or info.get("litellm_provider", "").startswith(provider)):
            limit_in = info.get("max_input_tokens") or info.get("max_tokens")
            limit_out = info.get("max_output_tokens") or info.get("max_tokens") or UNKNOWN_LIMITS[1]
            if limit_in:
                return _limits(int(limit_in), int(limit_out), True)
    return _limits(*UNKNOWN_LIMITS, False)
