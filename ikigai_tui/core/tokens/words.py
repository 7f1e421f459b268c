"""The words for an agent's two sizes, in one place: every line that shows them (the
gauge, the auto-compaction warning and note, `/context`, `ikigai context`) is made here.

- **sent**: the request: system prompt, pins, tools, summaries and the messages inside
  the sliding window. It is what the gauge shows, against the window and the model's
  input limit: `Sent: ~1.9K of 2K window · 1% of 200K`.
- **history**: the whole context, the turns the window prunes (no longer sent) included.
  It is what `compact_warn` and `compact_at` measure, against the window (or the model's
  input limit with the window off): `History 3.2K over the 2K window (163%), 1.9K sent`.
- **window**: the sliding window's size in tokens (set by `sliding_context_tokens` or
  `/budget`); "window off" when it is disabled.

History can exceed the window while what is sent fits it: the two are never given the
same name ("context at 163%" beside "1.9K of 2K"), so they never read as a
contradiction. Imports only core/tokens/limits.py.
"""

from __future__ import annotations

import math

from ikigai_tui.core.tokens.limits import format_percent, format_tokens

__all__ = ["SENT_LABEL", "history_line", "history_note", "history_warning",
           "sent_and_history", "sent_line", "sent_text"]

SENT_LABEL = "Sent"


def sent_text(tokens: int, limit: int, budget: int, exact: bool = True) -> str:
    """What is sent against the window and the model's limit, e.g.
    `~1.9K of 2K window · 1% of 200K` (`~`: estimated), or `~80K · 40% of 200K · window
    off` without a window."""
    approx = "" if exact else "~"
    size = f"{approx}{format_tokens(tokens)}"
    if budget > 0:
        size += f" of {format_tokens(budget)} window"
    if limit > 0:
        size += f" · {format_percent(100.0 * tokens / limit)} of {format_tokens(limit)}"
    if budget <= 0:
        size += " · window off"
    return size


def sent_line(tokens: int, limit: int, budget: int, exact: bool = True) -> str:
    """The gauge's line and /context's first: `Sent: ~1.9K of 2K window · 1% of 200K`."""
    return f"{SENT_LABEL}: {sent_text(tokens, limit, budget, exact)}"


def sent_and_history(sent: int, history: int, limit: int, budget: int, exact: bool) -> str:
    """`ikigai context`'s figures, in full: `~1,950 tokens sent of 200,000 (1%, window
    2,000); history 3,200`."""
    approx = "" if exact else "~"
    window = f"{budget:,}" if budget > 0 else "off"
    percent = format_percent(100.0 * sent / limit) if limit > 0 else "?"
    return (f"{approx}{sent:,} tokens sent of {limit:,} ({percent}, window {window}); "
            f"history {history:,}")


def _history_against(history: int, base: int, budget: int) -> str:
    """`3.2K over the 2K window (163%)`, `1.9K of the 2K window (95%)`, or against the model's
    input limit with the window off: `170K of the 200K input limit (85%)`."""
    share = f"{math.floor(100 * history / base)}%" if base > 0 else "?"
    what = "window" if budget > 0 else "input limit"
    word = "over" if history > base else "of"
    return f"{format_tokens(history)} {word} the {format_tokens(base)} {what} ({share})"


def history_warning(history: int, sent: int, budget: int, limit: int) -> str:
    """compact_warn's line: `History 3.2K over the 2K window (163%), 1.9K sent: /compact or
    /forget to make room`. When all of it is sent (nothing pruned, or the window off),
    no second figure."""
    base = budget or limit
    text = f"History {_history_against(history, base, budget)}"
    if sent < history:
        text += f", {format_tokens(sent)} sent"
    return text + ": /compact or /forget to make room"


def history_note(history: int, budget: int, limit: int) -> str:
    """compact_at's line, when auto-compaction starts."""
    base = budget or limit
    return f"History {_history_against(history, base, budget)}: compacting the older turns..."


def history_line(history: int) -> str:
    """/context's row for the whole history: what is sent plus what the window prunes
    (what compact_warn and compact_at measure)."""
    return f"  history        {history:>9,}  (sent + outside window)"
