"""The one rule for how a proposal is shown (core/commands/proposals.py, `Presentation`): each
kind says; the TUI opens the dialog of that kind, `run` and stream-json print
`printed_preview` (nothing for ids the user named, SPEC §5)."""

from __future__ import annotations

import pytest

from ikigai_tui.core.handlers.restore import RestoreProposal
from ikigai_tui.core.compaction.proposal import CompactProposal
from ikigai_tui.core.memory.proposal import MemoryProposal
from ikigai_tui.core.commands.proposals import (
    FilterProposal, Presentation, Proposal, ProposalItem, printed_preview,
)

ITEMS = (ProposalItem(3, "user", "the weather", 40), ProposalItem(4, "assistant", "sunny", 60))


def _filter(**options) -> FilterProposal:
    return FilterProposal("forget", (3, 4), ITEMS, 1000, **options)


def _compact() -> CompactProposal:
    return CompactProposal((3, 4), ITEMS, "They talked of the weather.", 1000, 100, "m",
                           count=len)


class _Change:
    def summary(self) -> str:
        return "create notes.md"

    def diff(self) -> list[str]:
        return ["+++ notes.md", "+hello"]


@pytest.mark.parametrize("proposal,kind", [
    (_filter(), Presentation.NONE),  # --ids: the user named them
    (_filter(review=True), Presentation.MATCHES),  # --ids --preview
    (_filter(criteria="weather", matcher="local"), Presentation.MATCHES),
    (_compact(), Presentation.SUMMARY),
    (RestoreProposal(ITEMS, 1000), Presentation.NONE),
    (RestoreProposal(ITEMS, 1000, review=True), Presentation.RESTORE),
    (MemoryProposal(_Change(), None), Presentation.MEMORY),  # type: ignore[arg-type]
])
def test_each_proposal_says_how_it_is_shown(proposal, kind):
    assert proposal.presentation is kind
    printed = printed_preview(proposal)
    assert printed == ([] if kind is Presentation.NONE else proposal.preview_lines())
    assert printed or kind is Presentation.NONE


def test_a_printed_compaction_shows_its_summary_and_saving():
    lines = printed_preview(_compact())
    assert lines[0].startswith("Replacing 2 messages (#3-#4")
    assert "  They talked of the weather." in lines


def test_a_proposal_that_does_not_say_has_no_rule():
    with pytest.raises(NotImplementedError):
        printed_preview(Proposal())
