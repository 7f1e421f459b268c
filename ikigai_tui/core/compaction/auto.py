"""Auto-compaction: after each turn, the agent's usage against its thresholds.

Usage is the agent's *history* (core/tokens/words.py: the whole context, the turns the
window would prune included) over its window: the window budget, capped to the model's
input limit, or the model's input limit with the window off. So a compaction replaces old turns with a summary before the window
would drop them.

- At `compact_warn` (0.8) a warning line, whether auto-compaction is on or not; once per
  crossing: again only after usage has dropped below and risen back.
- At `compact_at` (0.9), with `auto_compact` on or ask: one compaction, after the turn
  has ended (never during it), never while another compaction of the agent runs, at most
  once per turn, and not again until usage has dropped below the threshold and risen
  back. A failure is shown and tried again after the next turn; after 3 failures in a row
  it stops trying and says so after each turn, until the user acts (/compact by hand, or
  anything that brings usage below the threshold). A failure never fails the turn.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ikigai_tui.core.commands.bus import Pending
from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.notices import CompactionNotice
from ikigai_tui.core.compaction import MAX_FAILURES
from ikigai_tui.core.compaction.proposal import CompactProposal
from ikigai_tui.core.tokens.limits import format_tokens
from ikigai_tui.core.tokens.words import history_note, history_warning
from ikigai_tui.core.ports import StoreError
from ikigai_tui.core.commands.proposals import ACCEPT_ALL
from ikigai_tui.core.provider import ProviderError
from ikigai_tui.core.compaction.service import Compactor, AutoState

if TYPE_CHECKING:
    from ikigai_tui.core.agents import AgentRuntime
    from ikigai_tui.core.tokens.window import Window

log = logging.getLogger(__name__)
COMMAND = "/compact"


async def after_turn(compactor: Compactor, agent: AgentRuntime) -> None:
    """Never raises (a cancel goes on up): the turn is over whatever happens here."""
    session = compactor.host
    settings = compactor.settings
    if agent.dead:
        return
    measured = await history_share(session, agent.id)
    if measured is None:
        return
    w, share = measured
    whole = w.tokens + w.outside
    state = compactor.auto_state.get(agent.id)
    if state is None:
        state = compactor.auto_state[agent.id] = AutoState()
    notify = session.notify
    if share >= settings.warn:
        if not state.warned:
            state.warned = True
            notify(CompactionNotice(agent.id, "warning",
                                    history_warning(whole, w.tokens, w.budget, w.limit)))
    else:
        state.warned = False
    if share < settings.at:
        state.armed, state.failures = True, 0
        return
    if settings.auto not in ("on", "ask") or not state.armed:
        return
    if state.failures >= MAX_FAILURES:
        notify(CompactionNotice(agent.id, "warning", stopped_text()))
        return
    if agent.id in compactor.running:
        return
    state.armed = False
    try:
        await _compact(compactor, agent, history_note(whole, w.budget, w.limit))
    except (CommandError, ProviderError, StoreError) as exc:
        _failed(compactor, agent.id, state, str(exc))
    except Exception as exc:  # a bug must not end the turn badly: shown, logged
        log.exception("auto-compaction of %s failed", agent.id)
        _failed(compactor, agent.id, state, f"internal error: {exc!r}")
    else:
        state.failures = 0


async def history_share(session: Any, agent_id: str) -> tuple[Window, float] | None:
    """The agent's measure and its history's share of the window (what the automatic
    rules read: this one and core/compaction/tool_output.py); None when it cannot be
    measured or has no window."""
    try:
        w = await session.measure(agent_id)
    except (StoreError, CommandError):
        return None
    base = w.budget or w.limit
    if base <= 0:
        return None
    return w, (w.tokens + w.outside) / base


def stopped_text() -> str:
    return (f"Auto-compaction stopped after {MAX_FAILURES} failures in a row: /compact to "
            "compact by hand (it tries again after that), or /forget or /clear to make room")


def _failed(compactor: Compactor, agent_id: str, state: AutoState, reason: str) -> None:
    state.failures += 1
    state.armed = True  # tried again after the next turn
    reason = reason.removesuffix("; nothing was changed")
    text = (f"Auto-compaction failed ({state.failures} of {MAX_FAILURES}): {reason}. The "
            "context is unchanged")
    text += "." if state.failures >= MAX_FAILURES else "; it is tried again after the next turn."
    compactor.host.notify(CompactionNotice(agent_id, "error", text))
    if state.failures >= MAX_FAILURES:
        compactor.host.notify(CompactionNotice(agent_id, "warning", stopped_text()))


async def _compact(compactor: Compactor, agent: AgentRuntime, note: str) -> None:
    session = compactor.host
    session.notify(CompactionNotice(agent.id, "note", note))
    outcome = await session.propose(agent.id, COMMAND, source="auto")
    if not isinstance(outcome, Pending) or not isinstance(outcome.proposal, CompactProposal):
        raise CommandError("the compaction proposed nothing")
    proposal = outcome.proposal
    if proposal.saving() <= 0:
        raise CommandError("the summary would not make room "
                           f"({format_tokens(proposal.summary_tokens())} tokens for "
                           f"{format_tokens(proposal.replaced_tokens)})")
    if compactor.settings.auto == "ask" and compactor.reviewer is not None:
        compactor.reviewer(outcome)  # the preview answers it; nothing written until then
        return
    result = await session.answer(outcome, ACCEPT_ALL)
    for line in result.lines:
        session.notify(CompactionNotice(agent.id, "done", line))
