"""Find in a scrollback (Ctrl+F): which of the agent's entries hold what was typed.

Everything the pane can show is searched, loaded page or not: the agent's own messages
through the log's full-text index (so 100,000 messages cost one indexed query, not a
scan), and what it inherited at its fork (held in memory) by the same rule. The rule, as
you type: every word typed starts a word of the entry, in any case (`data sch` finds
"the database schema"), so each keystroke narrows the hits. Hits come in transcript order, each with why it is out of the
agent's context when it is (forgotten, cleared, ...)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ikigai_tui.tui.pages import AgentPages
from ikigai_tui.tui.transcript import SHOWN_KINDS

if TYPE_CHECKING:
    from ikigai_tui.core.session import Session

__all__ = ["Finder", "Hit", "words_of", "word_pattern"]

LIMIT = 1_000  # hits read from the index at most, the newest (the count then says "1,000+")
_WORD = re.compile(r"\w+", re.UNICODE)
SEARCHED = frozenset({"user", "assistant", "tool_call", "tool_result"}) & set(SHOWN_KINDS)


@dataclass(frozen=True)
class Hit:
    key: int  # the entry's event id
    outside: str | None  # why it is out of the context, or None


def words_of(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def word_pattern(words: list[str]) -> re.Pattern[str] | None:
    """Where the words typed start words of a text (for the highlight and the inherited
    entries)."""
    if not words:
        return None
    return re.compile(r"\b(?:" + "|".join(re.escape(w) for w in words) + ")", re.IGNORECASE)


def holds(text: str, words: list[str]) -> bool:
    found = {m.lower() for w in words for m in re.findall(r"\b" + re.escape(w), text, re.I)}
    return all(w.lower() in found for w in words)


class Finder:
    """The hits of one agent's transcript; one per find bar (it keeps the keys it may show)."""

    def __init__(self, session: Session, agent_id: str) -> None:
        self.session = session
        self.agent_id = agent_id
        self.pages = AgentPages(session, agent_id)
        self._inherited: set[int] | None = None

    async def find(self, text: str) -> tuple[list[Hit], bool]:
        """The hits in transcript order, and whether there may be more than LIMIT (the
        newest LIMIT are kept). One indexed query over the lineage's messages, each word
        typed the start of a word; an ancestor's message counts when the agent inherited
        it (the pane shows it)."""
        words = words_of(text)
        if not words:
            return [], False
        if self._inherited is None:
            self._inherited = {i.key for i in await self.pages.inherited() if i.kind in SEARCHED}
        lineage = [a.id for a in self.session.tree.lineage(self.agent_id)]
        query = " ".join(f'"{w}"*' for w in words)
        rows = await self.session.store.search_keys(query, lineage, LIMIT + 1)
        keys = sorted(key for key, agent in rows[:LIMIT]
                      if agent == self.agent_id or key in self._inherited)
        return [Hit(k, self.pages.outside(k)) for k in keys], len(rows) > LIMIT
