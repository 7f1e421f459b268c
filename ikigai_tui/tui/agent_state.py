"""Who needs you: each agent's one state, from what the session and the full screen know.

`agent_state` is the one place a state is decided; the tree's rows, the overview (F6),
the jump to the next agent that needs you (Ctrl+N) and the desktop notices all read it.
It is a pure function of plain facts (`Facts`): what the session knows of the agent
(dead, in a turn, a reply streaming) and what the full screen knows (its news the user
has not seen, tui/unseen.py; a permission question or a preview waiting for the user;
the tool or the matcher running, `Doings`).

The states, most pressing first:

- ``dead``: killed (nothing more happens to it);
- ``needs`` you: ``asks`` (a tool's permission question waits), ``review`` (a /forget,
  /remember or /compact preview opened for it waits), then, unless it works again,
  ``failed`` (a failed turn not looked at), ``new`` (a finished turn or mail not looked at);
- ``working``, with what: ``matching`` (a /forget or /remember matcher runs), the name of
  the tool running, ``streaming`` (its reply arrives), ``thinking`` (waiting for the model);
- ``idle``.

This module imports neither Textual nor the session: it is unit tested on its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import NamedTuple

from ikigai_tui.core.events import Event
from ikigai_tui.core.notices import EventsCommitted, MatchingNotice, Notice, TurnFinished

__all__ = ["AgentState", "Facts", "Doings", "agent_state", "IDLE", "DEAD"]

FAILED = "failed"  # how the words of a failure begin (tui/unseen.py's)


class AgentState(NamedTuple):
    kind: str  # needs | working | idle | dead
    detail: str = ""  # needs: asks, review, failed, new; working: matching, a tool, streaming, thinking

    @property
    def needs_you(self) -> bool:
        return self.kind == "needs"

    @property
    def words(self) -> str:
        """The state as the overview says it: ``needs you: asks``, ``working: bash``, ``idle``."""
        if self.kind == "needs":
            return f"needs you: {self.detail}"
        return f"{self.kind}: {self.detail}" if self.detail else self.kind

    @property
    def badge(self) -> str:
        """What the tree's row says after the name ("" for idle and dead: the glyph says it)."""
        return self.detail if self.kind in ("needs", "working") else ""


IDLE = AgentState("idle")
DEAD = AgentState("dead")


class Facts(NamedTuple):
    """What is known of one agent, as plain values."""

    dead: bool = False
    working: bool = False  # in a turn (this process's)
    streaming: bool = False  # its reply is arriving
    news: str | None = None  # the words of its news not seen (tui/unseen.py), if any
    asks: bool = False  # a permission question about one of its tools waits
    review: bool = False  # a preview opened for it waits for an answer
    tool: str | None = None  # the tool running in its turn
    matching: bool = False  # a /forget or /remember matcher runs for it


def agent_state(facts: Facts) -> AgentState:
    """The agent's one state (the module's docstring says the order)."""
    if facts.dead:
        return DEAD
    if facts.asks:
        return AgentState("needs", "asks")
    if facts.review:
        return AgentState("needs", "review")
    if facts.matching:
        return AgentState("working", "matching")
    if facts.working:
        detail = facts.tool or ("streaming" if facts.streaming else "thinking")
        return AgentState("working", detail)
    if facts.news is not None:
        return AgentState("needs", FAILED if facts.news.startswith(FAILED) else "new")
    return IDLE


class Doings:
    """What the full screen sees agents wait on or run, that the session's records do not
    hold: the tool each runs (its call committed, its result not yet), the matchers
    running, the permission questions and the previews waiting (counted: several may)."""

    def __init__(self, changed: Callable[[], None] = lambda: None,
                 asked: Callable[[str], None] = lambda agent_id: None) -> None:
        self.tools: dict[str, str] = {}
        self.matching: set[str] = set()
        self.asks: dict[str, int] = {}
        self.reviews: dict[str, int] = {}
        self.changed = changed  # told when a question, a preview or a matcher came or went
        self.asked = asked  # told the agent whose first question came (it needs the user)

    def heard(self, notice: Notice) -> bool:
        """Follow a notice; whether what it changed shows (the tree is stale)."""
        if isinstance(notice, EventsCommitted):
            return self._events(notice.events)
        if isinstance(notice, TurnFinished):
            return self.tools.pop(notice.agent_id, None) is not None
        if isinstance(notice, MatchingNotice):
            if notice.agent_id in self.matching:
                return False
            self.matching.add(notice.agent_id)
            return True
        return False

    def _events(self, events: Iterable[Event]) -> bool:
        changed = False
        for event in events:
            if event.kind == "tool_call":
                self.tools[event.agent_id] = str(event.payload.get("name", "tool"))
                changed = True
            elif event.kind in ("tool_result", "assistant", "error", "user"):
                changed |= self.tools.pop(event.agent_id, None) is not None
        return changed

    def matched(self, agent_id: str) -> None:
        """Its matcher ended (answered, cancelled or failed)."""
        if agent_id in self.matching:
            self.matching.discard(agent_id)
            self.changed()

    def waiting(self, table: dict[str, int], agent_id: str, more: int) -> None:
        """One more (`more` 1) or one less (-1) question or preview waits for the agent."""
        count = table.get(agent_id, 0) + more
        if count == 1 and more > 0 and table is self.asks:
            self.asked(agent_id)
        if count > 0:
            table[agent_id] = count
        else:
            table.pop(agent_id, None)
        self.changed()

    def facts(self, agent_id: str, *, dead: bool, working: bool, streaming: bool,
              news: str | None) -> Facts:
        return Facts(dead, working, streaming, news, agent_id in self.asks,
                     agent_id in self.reviews, self.tools.get(agent_id),
                     agent_id in self.matching)
