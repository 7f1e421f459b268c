"""The automatic policies, once an agent's turn has ended: clearing old tool output
(tool_output.py, opt-in), auto-compaction (auto.py), then the summary of the
pruned turns (pruned_update.py), never during a compaction."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ikigai_tui.core.compaction import auto, pruned_update, tool_output

if TYPE_CHECKING:
    from ikigai_tui.core.agents import AgentRuntime
    from ikigai_tui.core.compaction.service import Compactor


async def after_turn(compactor: Compactor, agent: AgentRuntime) -> None:
    await tool_output.after_turn(compactor.host, agent)  # first: it may make room cheaply
    await auto.after_turn(compactor, agent)
    await pruned_update.after_turn(compactor, agent)  # after any compaction, never during it
