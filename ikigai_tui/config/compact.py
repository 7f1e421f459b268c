"""The compaction settings of the config (issue 15): /compact's model, auto-compaction's
mode and thresholds, the pruned turns' summaries. config/__init__.py reads them with these."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

KEYS: dict[str, tuple[type, str]] = {
    "compact_model": (str, "a model name"),
    "auto_compact": (str, '"off", "on" or "ask"'),
    "compact_warn": (float, "a share of the window the history may fill, like 0.8"),
    "compact_at": (float, "a share of the window the history may fill, like 0.9"),
    "summarize_pruned": (bool, "true or false"),
    "summary_reserve": (float, "a share of the window, like 0.1"),
}
ENV = {"IKIGAI_AUTO_COMPACT": "auto_compact", "IKIGAI_COMPACT_WARN": "compact_warn",
       "IKIGAI_COMPACT_AT": "compact_at", "IKIGAI_SUMMARIZE_PRUNED": "summarize_pruned",
       "IKIGAI_SUMMARY_RESERVE": "summary_reserve"}
DEFAULTS = {"compact_model": None, "auto_compact": "off", "compact_warn": 0.8, "compact_at": 0.9,
            "summarize_pruned": False, "summary_reserve": 0.1}
_FLAGS = {"1": True, "true": True, "yes": True, "on": True,
          "0": False, "false": False, "no": False, "off": False}


def problem(key: str, value: Any) -> str | None:
    """Why a compaction setting cannot work, or None."""
    if key == "compact_model" and not value.strip():
        return "must not be empty"
    if key == "auto_compact" and value not in ("off", "on", "ask"):
        return f'must be "off", "on" or "ask", not {value!r}'
    if key in ("compact_warn", "compact_at") and not 0 < value <= 1:
        return "must be more than 0 and at most 1"
    if key == "summary_reserve" and not 0 < value < 1:
        return "must be more than 0 and less than 1"
    return None


def read(env: Mapping[str, str], file: dict[str, Any], env_float: Callable[..., float | None],
         checked: Callable[[str, str, Any], Any], error: type[Exception]) -> dict[str, Any]:
    """IKIGAI_* over the file over the defaults; `env_float`, `checked` and `error` are
    config/__init__.py's (its reading of a number, its check of a variable, ConfigError)."""
    found = {key: file.get(key, default) for key, default in DEFAULTS.items()}
    if env.get("IKIGAI_COMPACT_MODEL"):
        found["compact_model"] = env["IKIGAI_COMPACT_MODEL"]
    if raw := env.get("IKIGAI_AUTO_COMPACT"):
        found["auto_compact"] = checked("IKIGAI_AUTO_COMPACT", raw, raw.strip().lower())
    if raw := env.get("IKIGAI_SUMMARIZE_PRUNED"):
        flag = _FLAGS.get(raw.strip().lower())
        if flag is None:
            raise error(f"IKIGAI_SUMMARIZE_PRUNED={raw!r} must be true or false")
        found["summarize_pruned"] = flag
    for name in ("IKIGAI_COMPACT_WARN", "IKIGAI_COMPACT_AT", "IKIGAI_SUMMARY_RESERVE"):
        value = env_float(env, name)
        if value is not None:
            found[ENV[name]] = value
    if found["compact_warn"] > found["compact_at"]:
        raise error(f"compact_warn ({found['compact_warn']}) must not be above compact_at "
                    f"({found['compact_at']})")
    return found
