"""What the app's mixins use of the app: small Protocols IkigaiApp satisfies.

The mixins (tui/actions.py, tui/news.py, tui/outbox.py) are typed with these, not with
the app itself, so that none of them imports tui/app.py (which imports them). Each
mixin's own Protocol adds to `AppHost` what only it uses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ikigai_tui.core.session import Session
    from ikigai_tui.tui.panes import Panes

__all__ = ["AppHost"]


class AppHost(Protocol):
    """The session the app shows, the agent it focuses, its panes and their refresh."""

    session: Session | None
    focused_agent: str | None
    panes: Panes

    def schedule_refresh(self) -> None: ...
