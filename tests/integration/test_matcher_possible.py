"""How sure a match is (issue 29 item 3): what the matcher is less sure of is offered
unticked, never dropped and never applied as made; the preview counts both."""

from __future__ import annotations

from ikigai_tui.core.matching import POSSIBLE_REASON, Match, MatchReport
from ikigai_tui.core.commands.proposals import ACCEPT_ALL, REFUSE, FilterProposal, printed_preview
from tests.integration.session_helpers import msgs, talk


class Fixed:
    """A matcher that finds the first exchange and is unsure of the second."""

    name = "fixed"

    def __init__(self, likely: list[int], possible: list[int]) -> None:
        self.likely, self.possible = likely, possible

    async def match(self, *args, **kwargs):
        return MatchReport(tuple(Match(i, "meaning 0.40") for i in self.likely), "fixed",
                           possible=tuple(Match(i, f"{POSSIBLE_REASON}meaning 0.20")
                                          for i in self.possible))


async def exchanges(session, root: str) -> list[list[int]]:
    for text in ("my cat scratches the sofa", "a jazz record for tonight", "my tax return"):
        await talk(session, root, text)
    ids = [i for i, _kind, _text in await msgs(session, root)]
    return [ids[n:n + 2] for n in range(0, len(ids), 2)]


async def test_possible_ones_are_listed_unticked_and_applied_only_if_ticked(session, monkeypatch):
    root = session.tree.root.id
    cats, jazz, tax = await exchanges(session, root)
    monkeypatch.setattr(session, "matcher", lambda *a, **k: Fixed(cats, jazz))
    seen: list[FilterProposal] = []

    async def review(proposal):
        seen.append(proposal)
        return ACCEPT_ALL

    out = await session.command(root, "/forget cats", review=review)
    (proposal,) = seen
    assert {i.id: i.chosen for i in proposal.items} == {**dict.fromkeys(cats, True),
                                                        **dict.fromkeys(jazz, False)}
    assert printed_preview(proposal)[0] == (
        f'Matched by fixed: 2 messages match "cats" (2 likely, 2 possible, left unticked: '
        f"#{jazz[0]}, #{jazz[1]})")
    assert out.lines[0].startswith("Forgot 2 messages")
    left = [i for i, _kind, _text in await msgs(session, root)]
    assert left == jazz + tax  # the possible ones stay unless ticked


async def test_only_possible_ones_say_so_and_change_nothing(session, monkeypatch):
    root = session.tree.root.id
    _cats, jazz, _tax = await exchanges(session, root)
    monkeypatch.setattr(session, "matcher", lambda *a, **k: Fixed([], jazz))
    before = await msgs(session, root)
    out = await session.command(root, "/forget music")
    assert out.lines == [f'Nothing matches "music" (matched by fixed); possibly related, not '
                         f"likely: #{jazz[0]}, #{jazz[1]} (to look at them: /forget --ids "
                         f"{jazz[0]},{jazz[1]} --preview); nothing was changed."]
    assert await msgs(session, root) == before
    # The command it names previews exactly those, nothing else.
    seen = []

    async def review(proposal):
        seen.append(proposal)
        return REFUSE

    command = out.lines[0].split("to look at them: ")[1].split(")")[0]
    await session.command(root, command, review=review)
    (proposal,) = seen
    assert [i.id for i in proposal.items if i.chosen] == jazz
    assert await msgs(session, root) == before
