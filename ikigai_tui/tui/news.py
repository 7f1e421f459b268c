"""News of agents no pane shows, told on screen: a toast (one at a time), the tree's
badge (tui/unseen.py holds who has news) and the bell when the config asks for it.
A mixin of IkigaiApp over what it uses of the app (`NewsHost`), apart from the app's
start-up and refresh code."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Protocol

from textual.notifications import Notification
from textual.widgets._toast import ToastRack

from ikigai_tui.core.notices import Notice
from ikigai_tui.tui.host import AppHost
from ikigai_tui.tui.safe_text import sanitize
from ikigai_tui.tui.unseen import news_of

if TYPE_CHECKING:
    from textual.notifications import Notifications
    from textual.screen import Screen

    from ikigai_tui.config import Config
    from ikigai_tui.core.session import Session
    from ikigai_tui.tui.unseen import Unseen

__all__ = ["NewsToasts", "NewsHost"]


class NewsHost(AppHost, Protocol):
    """What the news toasts use of the app (and of Textual's notifications in it)."""

    config: Config
    unseen: Unseen
    _news_toast: Notification | None
    _notifications: Notifications
    NOTIFICATION_TIMEOUT: ClassVar[float]

    @property
    def screen_stack(self) -> list[Screen[object]]: ...

    def bell(self) -> None: ...

    def _toast_news(self, text: str) -> None: ...

    def _notice_desktop(self, text: str) -> None: ...

    def _unnotify(self, notification: Notification, refresh: bool = True) -> None: ...

    def _refresh_notifications(self) -> None: ...


class NewsToasts:
    def _tell_news(self: NewsHost, notice: Notice, session: Session) -> None:
        """A turn ended or failed, or mail came, for an agent no pane shows: a toast, the
        tree's badge until a pane shows it, the bell if the config asks for it, and a
        desktop notification with its `notify` (tui/attention.py)."""
        shown = {pane.agent_id for pane in self.panes.all()}
        for agent_id, words in news_of(notice, session.tree):
            if agent_id in shown:
                continue
            self.unseen.add(agent_id, words)
            text = f"{sanitize(session.tree.label(agent_id))} {words}"
            self._toast_news(text)
            if self.config.bell:
                self.bell()
            self._notice_desktop(text)
            self.schedule_refresh()

    def _toast_news(self: NewsHost, text: str) -> None:
        """One news toast at a time: a newer replaces the one still shown, its title
        counting the agents with news (five forks ending stacked toasts over the panes)."""
        old = self._news_toast
        if old is not None and old in self._notifications:
            self._unnotify(old, refresh=False)
            for screen in self.screen_stack:  # Textual leaves the holder of a toast it drops
                screen.query(f"#{ToastRack._toast_id(old)}").remove()
        self._news_toast = Notification(text, self.unseen.headline(), self.unseen.severity(),
                                        self.NOTIFICATION_TIMEOUT, markup=False)
        # Added at once, not through a Notify message: the next news may come before it.
        self._notifications.add(self._news_toast)
        self._refresh_notifications()
