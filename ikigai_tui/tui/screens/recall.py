"""/recall in the TUI: its hits are listed in the scrollback (the command's output), and
those out of the context open the preview dialog in mode "restore" (preview.py), each with
its state on its second line, grouped by exchange (a reply comes with its question, see
core/handlers/recall.py); the ticked ones come back through `/restore IDS` (tui/submit.py),
so what is written is exactly what that command writes (one `filter` event of mode
`restore`). A `/restore IDS --preview` opens the same dialog from its proposal (its
presentation kind, "restore": screens/dialogs.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ikigai_tui.core.commands.parse import CommandResult
from ikigai_tui.core.handlers.restore import RestoreProposal
from ikigai_tui.core.events import message_text
from ikigai_tui.core.commands.proposals import Proposal
from ikigai_tui.core.tokens.counter import Resize
from ikigai_tui.tui.screens.preview import PreviewItem, PreviewScreen
from ikigai_tui.tui.submit import Dialog, picked

if TYPE_CHECKING:
    from ikigai_tui.core.session import Session

NOTE = "Hits out of the context (this agent's and its ancestors'). A tool call comes back with its result."


def _loader(session: Session, roles: dict[int, str]):
    async def load_text(message_id: int) -> str:
        payload = (await session.store.payloads([message_id])).get(message_id)
        return "" if payload is None else message_text(roles.get(message_id, "user"), payload)
    return load_text


def _screen(session: Session, title: str, items: list[PreviewItem], resize: Resize,
            query: str | None) -> PreviewScreen:
    roles = {i.id: i.role for i in items}
    return PreviewScreen(title, items, resize.tokens, mode="restore", note=NOTE,
                         apply_label="Restore", criteria=query, load_text=_loader(session, roles),
                         resize=resize.after)


async def recall_screen(session: Session, agent_id: str, query: str,
                        result: CommandResult) -> PreviewScreen | None:
    """After `/recall QUERY`: the dialog of the hits that may come back, if any (it
    dismisses with the ids ticked)."""
    hits = [d for d in (result.data or []) if isinstance(d, dict) and d.get("restorable")]
    if not hits:
        return None
    hits.sort(key=lambda d: d["id"])
    items = [PreviewItem(d["id"], d["role"], d["text"], int(d.get("tokens") or 0), True,
                         reason=d["state"], exchange=d.get("exchange"), raw=d.get("raw_tokens"))
             for d in hits]
    tokens = (await session.measure(agent_id)).tokens
    resize = session.meter(session.tree[agent_id]).resize(tokens)  # as just measured
    return _screen(session, "Recall: bring messages back", items, resize, query)


def restore_dialog(proposal: Proposal, session: Session, _agent_id: str) -> Dialog:
    """A /restore --preview (or /recall --restore --preview): the messages to bring back."""
    assert isinstance(proposal, RestoreProposal)
    items = [PreviewItem(i.id, i.role, i.first_line, i.tokens, i.chosen, reason=i.reason,
                         exchange=i.exchange, raw=i.raw) for i in proposal.items]
    resize = proposal.resize or Resize(proposal.tokens_before, 0.0, 1.0)
    screen = _screen(session, proposal.title, items, resize, proposal.query)
    return Dialog(screen, picked)
