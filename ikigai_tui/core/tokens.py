"""Token estimates. Exact per-provider counting arrives with the sliding window."""

from __future__ import annotations

from dataclasses import dataclass

from ikigai_tui.core.events import message_text
from ikigai_tui.core.replay import Replayer
from ikigai_tui.core.request import system_text

BYTES_PER_TOKEN = 4


def estimate_text(text: str) -> int:
    return (len(text.encode("utf-8")) + BYTES_PER_TOKEN - 1) // BYTES_PER_TOKEN


@dataclass(frozen=True)
class Estimate:
    system: int
    messages: int

    @property
    def total(self) -> int:
        return self.system + self.messages


def estimate_context(r: Replayer) -> Estimate:
    messages = sum(estimate_text(message_text(kind, p)) for _, kind, p in r.ctx.values())
    return Estimate(estimate_text(system_text(r)), messages)
