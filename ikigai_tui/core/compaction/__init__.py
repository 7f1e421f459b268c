"""Compaction: older context replaced by one structured summary (SPEC §9, issue 15).

- `/compact [FOCUS]` (core/handlers/compact.py) picks the messages to summarise
  (select.py), has them summarised (summarise.py: the agent's model or `compact_model`,
  in side requests through the gateway; in pieces summarised concurrently, then a summary
  of the summaries, when they exceed the model's input limit; an extractive summary for
  the offline model) and returns a proposal (proposal.py) that a reviewer accepts, edits
  or refuses. Accepted, it is one `compact` event, which /undo reverses.
- Auto-compaction (auto.py) watches each agent's usage after its turns: a warning at
  `compact_warn`, a compaction at `compact_at`, never looping.

Nothing here imports textual or litellm.
"""

from __future__ import annotations

from typing import NamedTuple

AUTO_MODES = ("off", "on", "ask")
DEFAULT_KEEP = 2  # latest turns a /compact leaves as they are
MAX_FAILURES = 3  # auto-compaction failures in a row before it stops trying


class CompactionSettings(NamedTuple):
    model: str | None = None  # compact_model: the summarising model (None: the agent's)
    auto: str = "off"  # auto_compact: off | on | ask
    warn: float = 0.8  # compact_warn: share of the budget that draws a warning
    at: float = 0.9  # compact_at: share of the budget that triggers auto-compaction
    keep: int = DEFAULT_KEEP
    concurrency: int = 4  # pieces summarised at once
    piece_tokens: int | None = None  # cap on one request's messages (None: the model's limit)
    summarize_pruned: bool = False  # summaries of the turns the window drops
    pruned_reserve: float = 0.10  # their share of the budget
