"""What Enter does: a message to the agent, or a command; a command that proposes a
change (/forget, /remember) opens the preview, driven by the proposal the core returns;
explicit ids (`--ids`) apply at once, as SPEC §5 has it, unless `--preview` asks to see them.

/forget, /remember and /compact run in a worker: a matcher or a summary may take a while
(side requests in chunks), and the screen shows its progress once the core reports any;
Esc there cancels the side requests and writes nothing. A /compact opens its own preview
(the summary, editable; what it replaces; the saving); so does an automatic compaction
with auto_compact = "ask".
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from ikigai_tui.core.command_bus import Pending
from ikigai_tui.core.command_table import REGISTRY
from ikigai_tui.core.commands import CommandError, CommandResult, ParsedCommand
from ikigai_tui.core.notices import CompactingNotice
from ikigai_tui.core.events import message_text
from ikigai_tui.core.notices import MatchingNotice, Notice
from ikigai_tui.core.proposals import REFUSE, FilterProposal, Verdict
from ikigai_tui.core.session import Session

if TYPE_CHECKING:
    from ikigai_tui.tui.app import IkigaiApp
    from ikigai_tui.tui.screens.matching import MatchingScreen

FILTERS = ("forget", "remember", "compact")


async def submit(app: IkigaiApp, session: Session, agent_id: str, text: str) -> None:
    """Enter: a message (queued while the agent replies; `//` at the start sends a text
    that begins with `/`), or a command. The view goes to the end, where it shows."""
    stripped = text.strip()
    if not stripped.startswith("/") or stripped.startswith("//"):
        if stripped.startswith("//"):
            text = text.lstrip()[1:]
        await send(app, session, agent_id, text)
        return
    if stripped == "/help":
        app.action_help()
        return
    if stripped[1:].split() == ["exit"]:
        app.exit()
        return
    try:  # parsed once: the dialog is chosen by it, and the core runs it as parsed
        parsed = REGISTRY.parse(stripped)
        name = parsed.spec.name
        if name == "memory" and not parsed.args:
            _show_memory(app, session)
        elif name in FILTERS:
            app.run_worker(_filter(app, session, agent_id, parsed), group="filter")
        elif name == "recall":
            app.run_worker(_recall(app, session, agent_id, parsed), group="filter")
        else:
            await app.show_end()
            # Its output arrives as a logged event; a proposal waits for the preview.
            await _proposed(app, session, await session.propose(agent_id, parsed))
    except CommandError as exc:
        _failed(app, stripped, exc)


def _show_memory(app: IkigaiApp, session: Session) -> None:
    """/memory: the memory files in a dialog (`/memory PATH` prints one, as a command)."""
    from ikigai_tui.core.memory.service import memory_of
    from ikigai_tui.tui.screens.memory import MemoryScreen

    app.push_screen(MemoryScreen(memory_of(session)))


def _failed(app: IkigaiApp, command: str, exc: CommandError) -> None:
    """A command that wrote nothing: itself, then why (neither is in the log)."""
    app.note("command", command)
    app.note("error", f"Error: {exc}")


async def send(app: IkigaiApp, session: Session, agent_id: str, text: str) -> None:
    """A message to the agent, or queued for it while its reply runs. Refused before it
    is written (too long, no key for the model, a dead or busy agent, a full context), it
    goes back to the input, to fix what was said and send again."""
    await app.show_end()
    agent = session.tree[agent_id]
    if agent.task is not None and not agent.task.done():
        app.outbox.put(agent_id, text)
        app.show_queued()
        return
    queued = app.outbox.take(agent_id)  # left by a reply that failed: it goes first
    if queued is not None:
        text = f"{queued}\n\n{text}"
        app.show_queued()
    try:
        await session.say(agent_id, text)
    except CommandError as exc:  # nothing was written: the text is the user's still
        app.prompt_input.put_back(text)
        app.note("error", f"Error: {exc}")


async def _proposed(app: IkigaiApp, session: Session, outcome: CommandResult | Pending) -> None:
    if isinstance(outcome, Pending):
        _review(app, session, outcome)


async def _filter(app: IkigaiApp, session: Session, agent_id: str, parsed: ParsedCommand) -> None:
    """Run /forget, /remember (its matcher, if any) or /compact (its summary) with a
    progress screen, then review."""
    from ikigai_tui.tui.screens.matching import MatchingScreen

    name = parsed.spec.name
    shown: list[MatchingScreen] = []
    task = asyncio.current_task()

    def cancelled(result: bool | None) -> None:
        if result is False and task is not None and not task.done():
            task.cancel()

    def on_notice(notice: Notice) -> None:
        if not isinstance(notice, (MatchingNotice, CompactingNotice)) or notice.agent_id != agent_id:
            return
        if not shown:
            if isinstance(notice, CompactingNotice):
                screen = MatchingScreen("Compact: summarising", notice.model)
            else:
                verb = "Forget" if name == "forget" else "Remember"
                screen = MatchingScreen(f'{verb}: finding "{notice.criteria}"', notice.matcher)
            shown.append(screen)
            app.push_screen(screen, cancelled)
        shown[0].progress(notice.done, notice.total)

    session.listeners.append(on_notice)
    try:
        outcome = await session.propose(agent_id, parsed)
    except asyncio.CancelledError:
        what = "the summary" if name == "compact" else "the matcher"
        app.note("note", f"Cancelled: {what} stopped; nothing was written.")
        return
    except CommandError as exc:
        _failed(app, parsed.text, exc)
        return
    finally:
        with contextlib.suppress(ValueError):
            session.listeners.remove(on_notice)
        if shown:
            shown[0].finish()
    await _proposed(app, session, outcome)


async def _recall(app: IkigaiApp, session: Session, agent_id: str, parsed: ParsedCommand) -> None:
    """/recall QUERY: the hits in the scrollback, then a dialog to bring back those out of
    the context (screens/recall.py); with --restore, as any proposal."""
    from ikigai_tui.tui.screens.recall import open_recall

    await app.show_end()
    try:
        outcome = await session.propose(agent_id, parsed)
    except CommandError as exc:
        _failed(app, parsed.text, exc)
        return
    if isinstance(outcome, Pending):
        _review(app, session, outcome)
    else:
        await open_recall(app, session, agent_id, parsed.args, outcome)


def _review(app: IkigaiApp, session: Session, pending: Pending) -> None:
    """Show what would change; write only what the user confirms (or only the record)."""
    from ikigai_tui.core.commands_restore import RestoreProposal
    from ikigai_tui.core.compaction.proposal import CompactProposal
    from ikigai_tui.tui.screens.preview import PreviewItem, PreviewScreen

    proposal = pending.proposal
    if isinstance(proposal, CompactProposal):
        review_compaction(app, session, pending)
        return
    if isinstance(proposal, RestoreProposal):
        from ikigai_tui.tui.screens.recall import review_restore

        review_restore(app, session, pending)
        return
    if not isinstance(proposal, FilterProposal):  # no other kind yet: refuse, say why
        app.run_worker(answer(app, session, pending, REFUSE), group="preview")
        return
    if proposal.criteria is None and not proposal.review:  # the user named the ids
        app.run_worker(answer(app, session, pending, Verdict.accept()), group="preview")
        return
    items = [PreviewItem(i.id, i.role, i.first_line, i.tokens, i.chosen, reason=i.reason,
                         exchange=i.exchange if proposal.criteria is not None else None, raw=i.raw)
             for i in proposal.items]
    agent_id = pending.context.agent.id

    async def load_text(message_id: int) -> str:
        replayer = await session.replayer(agent_id)
        entry = (await session.bodies.entries(replayer, [message_id])).get(message_id)
        return "" if entry is None else message_text(entry[1], entry[2])

    screen = PreviewScreen(proposal.title, items, proposal.tokens_before,
                           mode="remove" if proposal.mode == "forget" else "keep",
                           note="A tool call and its result always go together.",
                           matcher=proposal.matcher, criteria=proposal.criteria,
                           load_text=load_text,
                           resize=proposal.resize.after if proposal.resize else None)

    def done(result: list[int] | None) -> None:
        verdict = REFUSE if result is None else Verdict.accept(result)
        app.run_worker(answer(app, session, pending, verdict), group="preview")

    app.push_screen(screen, done)


async def answer(app: IkigaiApp, session: Session, pending: Pending, verdict: Verdict) -> None:
    try:
        await session.answer(pending, verdict)
    except CommandError as exc:
        app.note("error", f"Error: {exc}")


def review_compaction(app: IkigaiApp, session: Session, pending: Pending) -> None:
    """The summary to accept (as edited) or refuse: nothing is written before."""
    from ikigai_tui.core.compaction.proposal import CompactProposal, CompactVerdict
    from ikigai_tui.tui.screens.compact_preview import CompactPreviewScreen
    from ikigai_tui.tui.screens.preview import PreviewItem

    proposal = pending.proposal
    assert isinstance(proposal, CompactProposal)
    items = [PreviewItem(i.id, i.role, i.first_line, i.tokens) for i in proposal.items]
    title = proposal.title + (" (automatic)" if proposal.auto else "")
    screen = CompactPreviewScreen(title, proposal.summary, items, by=proposal.by_line().rstrip(":"),
                                  saving=proposal.saving_line)

    def done(summary: str | None) -> None:
        verdict = REFUSE if summary is None else CompactVerdict(True, summary=summary)
        app.run_worker(answer(app, session, pending, verdict), group="preview")

    app.push_screen(screen, done)


def attach_reviewers(app: IkigaiApp, session: Session) -> None:
    """The dialogs of the "ask" settings: memory_writes (a diff of each change) and
    auto_compact (an automatic compaction waits for this preview)."""
    from ikigai_tui.tui.screens.memory_diff import install_reviewer

    install_reviewer(app, session)
    session.compactor.reviewer = lambda pending: app.call_later(
        review_compaction, app, session, pending)
