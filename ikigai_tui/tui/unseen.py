"""News from agents no pane shows: a turn ended, a turn failed, mail arrived.

Nothing finishes silently: such news about an agent the user is not looking at (no pane
shows it) is told in a toast and marks the agent in the tree with a `new` badge until a
pane shows it (focusing it, a split); the terminal bell rings too with `bell = true` in
the config. The set of agents with unseen news lives here and nowhere else: the tree
asks it for its badges, the panes' changes clear it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Literal

from ikigai_tui.core.notices import EventsCommitted, Notice, TurnFinished
from ikigai_tui.tui.safe_text import sanitize

if TYPE_CHECKING:
    from ikigai_tui.core.agents import AgentTree

__all__ = ["Unseen", "news_of"]

ERROR_SHOWN = 80  # characters of a failure's message in its toast
FAILED = "failed"  # how the words of a failure begin


class Unseen:
    """The agents with news the user has not seen, and the latest of it, in words."""

    def __init__(self, news: dict[str, str] | None = None,
                 kept: Callable[[dict[str, str]], None] = lambda news: None) -> None:
        self.news: dict[str, str] = news if news is not None else {}
        self.kept = kept  # told the news after each change (kept across restarts)

    def __contains__(self, agent_id: object) -> bool:
        return agent_id in self.news

    def add(self, agent_id: str, words: str) -> None:
        self.news[agent_id] = words
        self.kept(self.news)

    def keep_only(self, exists: Callable[[str], bool]) -> None:
        """Drop the news of agents that no longer exist."""
        gone = [agent_id for agent_id in self.news if not exists(agent_id)]
        for agent_id in gone:
            del self.news[agent_id]
        if gone:
            self.kept(self.news)

    def headline(self) -> str:
        """The news toast's title when several agents have news: how many (one toast
        tells the latest; they never stack over the panes' titles)."""
        if len(self.news) < 2:
            return ""
        failed = sum(words.startswith(FAILED) for words in self.news.values())
        return f"{len(self.news)} agents have news" + (f", {failed} failed" if failed else "")

    def severity(self) -> Literal["information", "warning"]:
        """A warning while any agent's unseen news is a failure."""
        return "warning" if any(w.startswith(FAILED) for w in self.news.values()) else "information"

    def seen(self, agent_ids: Iterable[str]) -> bool:
        """These agents are on screen now: their news is seen. Whether any was not."""
        gone = [a for a in agent_ids if a in self.news]
        for agent_id in gone:
            del self.news[agent_id]
        if gone:
            self.kept(self.news)
        return bool(gone)


def news_of(notice: Notice, tree: AgentTree) -> list[tuple[str, str]]:
    """(agent id, what happened) for each piece of news a notice brings: a turn that
    ended or failed (this process's), mail (sent by an agent's LLM, or from another
    process), a failure another process logged for an agent. Mail the user sent here
    with /send is no news: the user did it (its batch opens with the user's command)."""
    if isinstance(notice, TurnFinished):
        if notice.agent_id not in tree:
            return []
        if not notice.ok:
            return [(notice.agent_id, f"{FAILED}: {_short(notice.error or 'unknown error')}")]
        stopped = tree[notice.agent_id].status == "dead"
        return [(notice.agent_id, "was stopped" if stopped else "finished its turn")]
    if not isinstance(notice, EventsCommitted):
        return []
    found = []
    typed_by = None  # the agent whose command, typed by the user here, wrote what follows
    for event in notice.events:
        if event.kind == "command":
            typed_by = (event.agent_id if not notice.foreign
                        and event.payload.get("source") == "human" else None)
        if event.agent_id not in tree:
            continue
        if event.kind == "mail":
            sender = event.payload.get("from")
            if sender is not None and sender == typed_by:
                continue
            who = tree.label(sender) if isinstance(sender, str) and sender in tree else "another agent"
            found.append((event.agent_id, f"got mail from {sanitize(who)}"))
        elif event.kind == "error" and notice.foreign:  # this process's come as TurnFinished
            found.append((event.agent_id,
                          f"{FAILED}: {_short(str(event.payload.get('message', '')))}"))
    return found


def _short(text: str) -> str:
    line = sanitize(text.strip().splitlines()[0] if text.strip() else "")
    return line if len(line) <= ERROR_SHOWN else line[:ERROR_SHOWN - 1] + "…"
