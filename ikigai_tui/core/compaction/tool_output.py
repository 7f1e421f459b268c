"""The automatic rule for old tool output (opt-in: `tool_results_trigger`, a share of the
budget): after a turn, when the agent's history (the measure auto-compaction uses,
core/compaction/auto.py) crosses the trigger, the output of all but the latest
`tool_results_keep` tool results is cleared as /forget --tool-results would (no review,
like auto_compact = "on"; `tool_results_exclude` never), said in the scrollback, undone
by /undo. Once per crossing: not again until the history falls below and crosses again
(a turn past the trigger with nothing to clear yet leaves it armed).
It runs before auto-compaction, which may then find it has nothing left to do. A
failure is a line in the scrollback, never the turn's."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

from ikigai_tui.core.commands.bus import Pending
from ikigai_tui.core.commands.proposals import ACCEPT_ALL
from ikigai_tui.core.compaction.auto import history_share
from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.notices import CompactionNotice
from ikigai_tui.core.ports import StoreError

if TYPE_CHECKING:
    from ikigai_tui.core.agents import AgentRuntime

log = logging.getLogger(__name__)
# Per session: agent id -> armed (False once it fired, until the history falls below).
_armed: WeakKeyDictionary[Any, dict[str, bool]] = WeakKeyDictionary()


async def after_turn(session: Any, agent: AgentRuntime) -> None:
    """Never raises (a cancel goes on up): the turn is over whatever happens here."""
    settings = session.settings.tool_results
    if settings.trigger is None or agent.dead:
        return
    measured = await history_share(session, agent.id)
    if measured is None:
        return
    armed = _armed.setdefault(session, {})
    if measured[1] < settings.trigger:
        armed[agent.id] = True
        return
    if not armed.get(agent.id, True):
        return
    try:
        outcome = await session.propose(agent.id, f"/forget --tool-results --keep {settings.keep}",
                                        source="auto")
        if not isinstance(outcome, Pending):
            return  # nothing to clear yet: tried again after the next turn
        armed[agent.id] = False
        result = await session.answer(outcome, ACCEPT_ALL)
    except (CommandError, StoreError) as exc:
        armed[agent.id] = False  # said once; not again until the next crossing
        session.notify(CompactionNotice(agent.id, "error", f"Clearing old tool output failed: {exc}"))
        return
    except Exception as exc:  # a bug must not end the turn badly: shown, logged
        armed[agent.id] = False
        log.exception("clearing the tool output of %s failed", agent.id)
        session.notify(CompactionNotice(agent.id, "error",
                                        f"Clearing old tool output failed: internal error: {exc!r}"))
        return
    share = f"{settings.trigger:.0%}"
    for line in result.lines:
        session.notify(CompactionNotice(agent.id, "note", f"The history passed {share} of the "
                                        f"window: {line[0].lower()}{line[1:]}"))
