"""Context changes the LLM asks for, reviewed by the user (SPEC §4's first principle:
the context changes only through explicit user action).

The agent's LLM can change its own context through its tools: `slash` with /clear or
/rewind, `filter_context apply`. Each such change is a `FilterProposal` (what leaves,
the sizes before and after) that goes through `ContextReview.review` before anything
is written. The setting `llm_context_changes`:

- "ask" (the config's default): the reviewer the front end installs answers: the full
  screen's preview modal (one at a time, in order, titled with the agent whose LLM
  asks), headless `run` and `-p` accept under `--yes` and refuse otherwise; with none
  installed, refused.
- "allow": applied as the LLM asked (still undoable with /undo).
- "deny": refused without asking.

A reviewer may untick messages: then exactly the ticked ones leave, as a forget of
those ids (a /clear or /rewind so edited becomes `/forget --ids`). A refusal writes
only the command record, flagged `refused` (`ikigai log` says who refused it).
The tool result says which (`outcome_reply`): applied (the ids, the context's size
after), edited (the ids applied and those the user kept in), or refused.

Not a change to review: the LLM's `slash check-mail`. Its mail reaches the LLM as that
call's result, as a file it reads would: it only adds, in the LLM's own turn, and nothing
the agent saw leaves or is rewritten (the mail's sender is an agent the user runs, and
which agents mail may wake is the user's `/mail` setting).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from ikigai_tui.core.commands.proposals import (
    ACCEPT_ALL, REFUSE, FilterProposal, Proposal, Verdict,
)

if TYPE_CHECKING:
    from ikigai_tui.core.commands.bus import Pending
    from ikigai_tui.core.commands.parse import CommandResult
    from ikigai_tui.core.tools import ToolHost

ASK, ALLOW, DENY = "ask", "allow", "deny"
MODES = (ASK, ALLOW, DENY)

# Who refused, in the command record and the tool result.
BY_USER = "the user"
BY_SETTING = "llm_context_changes = \"deny\""
BY_NOBODY = "nobody was there to review it"


class LlmChange(NamedTuple):
    """One change the LLM asks for: which agent's LLM (its id and name as shown) and
    what would leave."""

    agent_id: str
    agent: str
    proposal: Proposal


Reviewer = Callable[[LlmChange], Awaitable[Verdict]]


class Reviewed(NamedTuple):
    verdict: Verdict
    refused_by: str | None = None  # None: accepted (whole or edited)


class ContextReview:
    """The setting and who answers under "ask" (installed by the front end)."""

    def __init__(self, mode: str = ASK) -> None:
        if mode not in MODES:
            raise ValueError(f"llm_context_changes must be one of {', '.join(MODES)}, not {mode!r}")
        self.mode = mode
        self.reviewer: Reviewer | None = None
        # Told of each change refused because nobody can review it (headless without --yes).
        self.unreviewed: Callable[[LlmChange], None] | None = None
        self.asked = 0  # changes put to the user in this process (for /context later)
        self.accepted = 0

    async def review(self, change: LlmChange) -> Reviewed:
        if self.mode == ALLOW:
            return Reviewed(ACCEPT_ALL)
        if self.mode == DENY:
            return Reviewed(REFUSE, BY_SETTING)
        if self.reviewer is None:
            if self.unreviewed is not None:
                self.unreviewed(change)
            return Reviewed(REFUSE, BY_NOBODY)
        self.asked += 1
        verdict = await self.reviewer(change)
        if not verdict.accepted:
            return Reviewed(verdict, BY_USER)
        self.accepted += 1
        proposal = change.proposal
        if (verdict.ids is not None and isinstance(proposal, FilterProposal)
                and set(verdict.ids) == {i.id for i in proposal.items if i.chosen}):
            return Reviewed(ACCEPT_ALL)  # nothing unticked: as the LLM asked
        return Reviewed(verdict)


def refusal_line(refused_by: str) -> str:
    """The command record's output, and the tool result's words, for a refusal."""
    if refused_by == BY_NOBODY:
        return ("Refused: context changes the LLM asks for wait for the user's yes "
                "(llm_context_changes = \"ask\") and nobody was there to review it; nothing changed.")
    return f"Refused by {refused_by}; nothing changed."


async def review_pending(host: ToolHost, agent_id: str, pending: Pending) -> tuple[Reviewed, CommandResult]:
    """Put a change the LLM asked for (a command's proposal) to the review, then write
    what it accepted, or only the command record flagged with who refused it."""
    reviewed = await review_change(host, agent_id, pending.proposal)
    if reviewed.refused_by is not None:
        refused = (reviewed.refused_by, refusal_line(reviewed.refused_by))
        return reviewed, await host.answer(pending, REFUSE, refused)
    return reviewed, await host.answer(pending, reviewed.verdict)


async def review_change(host: ToolHost, agent_id: str, proposal: Proposal) -> Reviewed:
    label = host.tree.label(agent_id)
    return await host.context_review.review(LlmChange(agent_id, label, proposal))


def outcome_reply(proposal: Proposal, reviewed: Reviewed, result: CommandResult,
                  **more: Any) -> dict[str, Any]:
    """What the tool result says: applied, edited or refused; the ids that leave the
    context, those the user kept in, and the context's size after (projected: a change
    applies when the turn ends; a filter's as its event records it)."""
    if reviewed.refused_by is not None:
        return {"result": "refused", "refused_by": reviewed.refused_by,
                "note": refusal_line(reviewed.refused_by), **more}
    verdict = reviewed.verdict
    reply: dict[str, Any] = {"result": "applied" if verdict.ids is None else "edited"}
    if isinstance(proposal, FilterProposal):
        leaving = [i.id for i in proposal.removed(verdict)]
        if verdict.ids is not None:
            asked = {i.id for i in proposal.removed()}
            reply["kept_by_the_user"] = sorted(asked - set(leaving))
        reply["ids_leaving"] = leaving
        record = result.data if isinstance(result.data, dict) else {}
        if "after" in record:  # the size the filter event records (the planning gone too)
            reply["context_after"] = dict(record["after"])
        else:
            reply["context_after"] = {
                "messages": max(0, proposal.context_messages - len(leaving)),
                "tokens": proposal.tokens_after(verdict)}
    reply["note"] = " ".join(result.lines)
    return reply | more


def change_reference(call: int, result: CommandResult) -> dict[str, Any]:
    """How the LLM and the user find the event an accepted change writes (a filter for
    filter_context apply, a clear or rewind for the slash tool, or a filter of the ticked
    ids when the user edited it). Its id cannot be known yet: the change is written when
    the turn ends (no request may see its context change mid-turn), after this result,
    and the log gives ids only as it writes. So the reference is the asking call's id,
    which the event records as `call`."""
    from ikigai_tui.core.commands.bus import DEFERRED_PREFIX  # (`ikigai log` imports this module)

    deferred = bool(result.lines) and result.lines[0].startswith(DEFERRED_PREFIX)
    return {"call": call, "applies": "when this turn ends" if deferred else "now",
            "find": f"the event with call {call} (/history, ikigai log --json)"}
