"""The sliding window: whole turns leave the front until the request fits the budget."""

from __future__ import annotations

from dataclasses import dataclass

from ikigai_tui.core.events import message_text
from ikigai_tui.core.replay import Replayer
from ikigai_tui.core.request import system_text
from ikigai_tui.core.tokens import estimate_text


@dataclass(frozen=True)
class Window:
    start: int | None  # id of the first message in the window, None when empty
    first_index: int  # index of that message in the context
    tokens: int  # system + window, estimated
    pruned_turns: int


def compute_window(r: Replayer, budget: int) -> Window:
    entries = list(r.ctx.items())
    system = estimate_text(system_text(r))
    sizes = [estimate_text(message_text(e[1], e[2])) for _, e in entries]
    total = system + sum(sizes)
    # A turn starts at each user message; anything before the first is turn 0.
    starts = [i for i, (_, e) in enumerate(entries) if e[1] == "user" and i > 0]
    first, pruned = 0, 0
    if budget > 0:
        for start in starts:
            if total <= budget:
                break
            total -= sum(sizes[first:start])
            first, pruned = start, pruned + 1
    start_id = entries[first][0] if entries else None
    return Window(start_id, first, total, pruned)
