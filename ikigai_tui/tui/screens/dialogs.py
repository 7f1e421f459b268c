"""The dialogs the submit path opens (tui/submit.py's `Screens`): a proposal's by its
presentation kind (core/commands/proposals.py, the rule the command line follows too), the
progress of a matcher or a summary, /memory's, /recall's, /history's, and a tool's permission request. The app hands this table
to its `SubmitController`, which imports no screen. Each screen's module loads when its
dialog is first opened, as before (the command path comes after the first frame).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ikigai_tui.core.events import message_text
from ikigai_tui.core.commands.proposals import ACCEPT_ALL, REFUSE, FilterProposal, Presentation, Proposal
from ikigai_tui.tui.submit import Dialog, Screens, picked

if TYPE_CHECKING:
    from ikigai_tui.core.commands.parse import CommandResult
    from ikigai_tui.core.session import Session
    from ikigai_tui.core.tools.permissions import PermissionRequest


def matches_dialog(proposal: Proposal, session: Session, agent_id: str) -> Dialog:
    """/forget, /remember: what the matcher found (or the ids under --preview), to untick."""
    from ikigai_tui.tui.screens.preview import PreviewItem, PreviewScreen

    assert isinstance(proposal, FilterProposal)
    items = [PreviewItem(i.id, i.role, i.first_line, i.tokens, i.chosen, reason=i.reason,
                         exchange=i.exchange if proposal.criteria is not None else None, raw=i.raw)
             for i in proposal.items]

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
    return Dialog(screen, picked)


def summary_dialog(proposal: Proposal, _session: Session, _agent_id: str) -> Dialog:
    """A /compact (or an automatic one, auto_compact = "ask"): the summary to accept (as
    edited) or refuse."""
    from ikigai_tui.core.compaction.proposal import CompactProposal, CompactVerdict
    from ikigai_tui.tui.screens.compact_preview import CompactPreviewScreen
    from ikigai_tui.tui.screens.preview import PreviewItem

    assert isinstance(proposal, CompactProposal)
    items = [PreviewItem(i.id, i.role, i.first_line, i.tokens) for i in proposal.items]
    title = proposal.title + (" (automatic)" if proposal.auto else "")
    screen = CompactPreviewScreen(title, proposal.summary, items, by=proposal.by_line().rstrip(":"),
                                  saving=proposal.saving_line)
    return Dialog(screen, lambda summary: REFUSE if summary is None
                  else CompactVerdict(True, summary=summary))


def restore_dialog(proposal: Proposal, session: Session, agent_id: str) -> Dialog:
    from ikigai_tui.tui.screens.recall import restore_dialog as dialog

    return dialog(proposal, session, agent_id)


def memory_dialog(proposal: Proposal, _session: Session, _agent_id: str) -> Dialog:
    """memory_writes = "ask": the diff of the change the LLM proposes, y or n."""
    from ikigai_tui.core.memory.proposal import MemoryProposal
    from ikigai_tui.tui.screens.memory_diff import MemoryDiffScreen

    assert isinstance(proposal, MemoryProposal)
    return Dialog(MemoryDiffScreen(proposal), lambda yes: ACCEPT_ALL if yes else REFUSE)


def progress_screen(title: str, model: str | None) -> Any:
    from ikigai_tui.tui.screens.matching import MatchingScreen

    return MatchingScreen(title, model)


def memory_screen(memory: Any) -> Any:
    from ikigai_tui.tui.screens.memory import MemoryScreen

    return MemoryScreen(memory)


def permission_screen(request: PermissionRequest, waiting: int) -> Any:
    """A tool the permission rules ask about: the agent, the tool, what will run."""
    from ikigai_tui.tui.screens.permission import PermissionScreen

    return PermissionScreen(request, waiting)


def side_screen(question: str, model: str) -> Any:
    """/btw's panel: the question and its answer as it streams (tui/side.py drives it)."""
    from ikigai_tui.tui.screens.side_answer import SideAnswerScreen

    return SideAnswerScreen(question, model)


async def recall_screen(session: Session, agent_id: str, query: str,
                        result: CommandResult) -> Any | None:
    from ikigai_tui.tui.screens.recall import recall_screen as screen

    return await screen(session, agent_id, query, result)


def history_screen(session: Session, agent_id: str, result: Any) -> Any | None:
    from ikigai_tui.tui.screens.history import history_screen as screen

    return screen(session, agent_id, result)


SCREENS = Screens(
    dialogs={Presentation.MATCHES: matches_dialog, Presentation.SUMMARY: summary_dialog,
             Presentation.RESTORE: restore_dialog, Presentation.MEMORY: memory_dialog},
    progress=progress_screen, memory=memory_screen, recall=recall_screen,
    permission=permission_screen, history=history_screen, side=side_screen,
)
