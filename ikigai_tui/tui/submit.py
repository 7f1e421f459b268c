"""What Enter does: a message to the agent, or a command; a command that proposes a
change (/forget, /remember) opens the preview, driven by the proposal the core returns."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ikigai_tui.core.command_bus import Pending
from ikigai_tui.core.commands import CommandError
from ikigai_tui.core.proposals import REFUSE, FilterProposal, Verdict
from ikigai_tui.core.session import Session

if TYPE_CHECKING:
    from ikigai_tui.tui.app import IkigaiApp


async def submit(app: IkigaiApp, session: Session, agent_id: str, text: str) -> None:
    stripped = text.strip()
    try:
        if not stripped.startswith("/"):
            await session.say(agent_id, text)
            return
        words = stripped[1:].split()
        if stripped == "/help":
            app.action_help()
        elif words == ["exit"]:
            app.exit()
        else:
            # Its output arrives as a logged event; a proposal waits for the preview.
            outcome = await session.propose(agent_id, stripped)
            if isinstance(outcome, Pending):
                _review(app, session, outcome)
    except CommandError as exc:
        app.note("error", f"Error: {exc}")


def _review(app: IkigaiApp, session: Session, pending: Pending) -> None:
    """Show what would change; write only what the user confirms (or only the record)."""
    from ikigai_tui.tui.screens.preview import PreviewItem, PreviewScreen

    proposal = pending.proposal
    if not isinstance(proposal, FilterProposal):  # no other kind yet: refuse, say why
        app.run_worker(_answer(app, session, pending, REFUSE), group="preview")
        return
    items = [PreviewItem(i.id, i.role, i.first_line, i.tokens, i.chosen) for i in proposal.items]
    screen = PreviewScreen(proposal.title, items, proposal.tokens_before,
                           mode="remove" if proposal.mode == "forget" else "keep",
                           note="A tool call and its result always go together.")

    def done(result: list[int] | None) -> None:
        verdict = REFUSE if result is None else Verdict.accept(result)
        app.run_worker(_answer(app, session, pending, verdict), group="preview")

    app.push_screen(screen, done)


async def _answer(app: IkigaiApp, session: Session, pending: Pending, verdict: Verdict) -> None:
    try:
        await session.answer(pending, verdict)
    except CommandError as exc:
        app.note("error", f"Error: {exc}")
