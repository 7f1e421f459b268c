"""The tool settings of the config (issue 25): how many tool rounds a turn may run, the
longest a `bash` command may run, and which withheld environment variables the tools'
child processes may still get. config/__init__.py reads them with these."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

KEYS: dict[str, tuple[type, str]] = {
    "max_tool_rounds": (int, "a whole number of tool rounds per turn, 1 or more"),
    "bash_max_timeout": (float, "seconds, more than 0"),
    "tool_env_pass": (list, 'a list of variable names, like ["GITHUB_TOKEN"]'),
    # clearing old tool output (/forget --tool-results, its automatic rule)
    "tool_results_trigger": (float, "a share of the window the history may fill, like 0.7"),
    "tool_results_keep": (int, "a whole number of the latest tool results kept, 0 or more"),
    "tool_results_exclude": (list, 'a list of tool names, like ["memory"]'),
}
ENV = {"IKIGAI_MAX_TOOL_ROUNDS": "max_tool_rounds", "IKIGAI_BASH_MAX_TIMEOUT": "bash_max_timeout",
       "IKIGAI_TOOL_ENV_PASS": "tool_env_pass", "IKIGAI_TOOL_RESULTS_TRIGGER": "tool_results_trigger"}
DEFAULTS: dict[str, Any] = {"max_tool_rounds": 25, "bash_max_timeout": 600.0, "tool_env_pass": (),
                            "tool_results_trigger": None, "tool_results_keep": 3,
                            "tool_results_exclude": ("memory",)}
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def problem(key: str, value: Any) -> str | None:
    """Why a tool setting cannot work, or None."""
    if key == "max_tool_rounds" and value < 1:
        return "must be 1 or more"
    if key == "bash_max_timeout" and value <= 0:
        return "must be more than 0 seconds"
    if key == "tool_results_trigger" and not 0 < value <= 1:
        return "must be more than 0 and at most 1"
    if key == "tool_results_keep" and value < 0:
        return "must be 0 or more"
    if key == "tool_results_exclude" and not all(isinstance(name, str) for name in value):
        return "must list tool names"
    if key == "tool_env_pass":
        bad = [name for name in value if not isinstance(name, str) or not _NAME.match(name)]
        if bad:
            return f"must list variable names; not {bad[0]!r}"
    return None


def read(env: Mapping[str, str], file: dict[str, Any], env_int: Callable[..., int | None],
         env_float: Callable[..., float | None],
         checked: Callable[[str, str, Any], Any]) -> dict[str, Any]:
    """IKIGAI_* over the file over the defaults; `env_int`, `env_float` and `checked` are
    config/__init__.py's. IKIGAI_TOOL_ENV_PASS is a list of names split by commas or spaces."""
    found = {key: file.get(key, default) for key, default in DEFAULTS.items()}
    if (rounds := env_int(env, "IKIGAI_MAX_TOOL_ROUNDS")) is not None:
        found["max_tool_rounds"] = rounds
    if (longest := env_float(env, "IKIGAI_BASH_MAX_TIMEOUT")) is not None:
        found["bash_max_timeout"] = longest
    if raw := env.get("IKIGAI_TOOL_ENV_PASS"):
        found["tool_env_pass"] = checked("IKIGAI_TOOL_ENV_PASS", raw,
                                         [n for n in re.split(r"[\s,]+", raw) if n])
    if (trigger := env_float(env, "IKIGAI_TOOL_RESULTS_TRIGGER")) is not None:
        found["tool_results_trigger"] = trigger
    found["tool_env_pass"] = tuple(found["tool_env_pass"])
    found["tool_results_exclude"] = tuple(found["tool_results_exclude"])
    return found
