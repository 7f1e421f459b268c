"""Clearing old tool output (issue 25 item 5, Anthropic's `clear_tool_uses`): the text
sent of older tool results is replaced by a one-line stub while the calls and results
stay in the context (core/handlers/tool_results.py for /forget --tool-results,
core/compaction/tool_output.py for the automatic rule). Here: their settings and the
stub (nothing imported: the replay reads it)."""

from __future__ import annotations

from typing import NamedTuple


class ToolResultsSettings(NamedTuple):
    keep: int = 3  # tool_results_keep: the latest results never cleared
    exclude: tuple[str, ...] = ("memory",)  # tool_results_exclude: tools never cleared
    trigger: float | None = None  # tool_results_trigger: a share of the budget (None: off)


def cleared_stub(key: int, tokens: int) -> str:
    """What is sent instead of a cleared tool result's text (its entry's `cleared`)."""
    size = f"{tokens:,}" if tokens < 1000 else f"{tokens / 1000:,.1f}K"  # 12.4K, as the issue
    return f"[output cleared: {size} tokens; /restore {key}]"
