"""Budgets and limits: the numbers every layer shares, and how a token count is shown.

Imports nothing: the config, the TUI widgets and the llm package read it cheaply.
"""

from __future__ import annotations

import math
from typing import NamedTuple

DEFAULT_BUDGET = 100_000  # tokens of the sliding window when nothing is configured
WARNING = 0.80  # share of the input limit from which the usage is a warning
CRITICAL = 0.95
STATES = ("normal", "warning", "critical", "full")
MAX_OUTPUT_RESERVE = 16_384  # room kept for the reply is at most this


class Limits(NamedTuple):
    input: int  # the model's input limit in tokens
    reserve: int  # room kept for the reply
    known: bool  # False: an assumed size for a model no map lists
    # where the input limit comes from: "map" (litellm's model map), "published" (the
    # provider's published figure for a model the pinned map lacks), "config" ([models]),
    # "offline", or "assumed" (nothing knows the model: a common size)
    source: str = "map"


def limit_words(limits: Limits, model: str) -> str | None:
    """What /context and the model's warning say of a limit nothing knows, or of one taken
    from the providers' published figures; None for a limit the map or the config gives."""
    if limits.source == "assumed":
        return (f"{format_tokens(limits.input)} is assumed: litellm's model map does not list "
                f"{model}; set max_input_tokens in [models.\"{model}\"] in the config")
    if limits.source == "published":
        return (f"{format_tokens(limits.input)} is the provider's published figure: litellm's "
                f"model map does not list {model}")
    return None


def usage_state(share: float) -> str:
    """normal / warning (>= 80%) / critical (>= 95%) / full (>= 100%) of the input limit."""
    if share >= 1.0:
        return "full"
    if share >= CRITICAL:
        return "critical"
    if share >= WARNING:
        return "warning"
    return "normal"


def format_tokens(count: int) -> str:
    """999 -> "999", 1950 -> "1.9K", 2000 -> "2K", 80000 -> "80K", 1500000 -> "1.5M"."""
    count = max(0, int(count))
    if count < 1000:
        return str(count)
    if count < 10_000:
        return f"{math.floor(count / 100) / 10:.1f}".removesuffix(".0") + "K"
    thousands = round(count / 1000)
    if thousands < 1000:
        return f"{thousands}K"
    return f"{count / 1_000_000:.1f}".removesuffix(".0") + "M"


def format_percent(percent: float) -> str:
    """A share of the model's limit, as the gauge, the tree and /context all show it:
    floored, so it never reaches a threshold (80%, 95%) before the state does; but any
    usage at all reads at least 1% (0.95% is not "0%"), and no usage reads 0%."""
    if not math.isfinite(percent):
        return "?"
    if percent <= 0:
        return "0%"
    return f"{max(1, math.floor(percent))}%"
