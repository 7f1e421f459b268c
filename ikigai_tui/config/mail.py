"""The mail settings of the config (issue 27): whether mail wakes an agent, how many
turns woken by mail an agent may take in a row, and how long the LLM's /wait waits.
config/__init__.py reads them with these; the rules are core/mailbox.py's."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

MODES = ("wake", "manual")
KEYS: dict[str, tuple[type, str]] = {
    "mail": (str, '"wake" or "manual"'),
    "wake_limit": (int, "a whole number of turns, 1 or more"),
    "wait_timeout": (float, "seconds, more than 0"),
}
ENV = {"IKIGAI_MAIL": "mail"}
DEFAULTS: dict[str, Any] = {"mail": None, "wake_limit": 10, "wait_timeout": 600.0}


def problem(key: str, value: Any) -> str | None:
    """Why a mail setting cannot work, or None."""
    if key == "mail" and value not in MODES:
        return 'must be "wake" or "manual"'
    if key == "wake_limit" and value < 1:
        return "must be 1 or more"
    if key == "wait_timeout" and value <= 0:
        return "must be more than 0 seconds"
    return None


def read(env: Mapping[str, str], file: dict[str, Any], checked) -> dict[str, Any]:
    """IKIGAI_MAIL over the file over the defaults (`checked` is config/__init__.py's)."""
    found = {key: file.get(key, default) for key, default in DEFAULTS.items()}
    if raw := env.get("IKIGAI_MAIL"):
        found["mail"] = checked("IKIGAI_MAIL", raw, raw)
    return found
