"""Completion of slash commands, mark names and agents; the command palette's commands."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from textual.content import Content
from textual.command import DiscoveryHit, Hit, Hits, Provider

from ikigai_tui.core.commands.registry import REGISTRY

if TYPE_CHECKING:
    from ikigai_tui.core.session import Session

MARK_COMMANDS = ("clear", "rewind", "fork")
AGENT_COMMANDS = ("send", "kill", "wait")


def completions(session: Session | None, agent_id: str | None, before: str) -> list[str]:
    """Candidates replacing the word being typed (the text after the last space)."""
    if not before.startswith("/"):
        return []
    head, _, word = before.rpartition(" ")
    if not head:  # the command name itself
        return [f"/{s.name}" for s in REGISTRY if f"/{s.name}".startswith(word)]
    name = head.split()[0][1:]
    if head.strip() != head.split()[0]:
        return []  # only the first argument is completed
    if session is None or agent_id is None:
        return []
    if name in MARK_COMMANDS:
        replayer = session.tree[agent_id].replayer
        labels = [m.label for m in replayer.valid_marks()] if replayer is not None else []
        return [label for label in labels if label.startswith(word)]
    if name in AGENT_COMMANDS or name == "revive":  # /revive: only the dead come back
        tree = session.tree
        names = [a.name or tree.short_id(a.id) for a in tree
                 if a.dead == (name == "revive") and a.id != agent_id]
        return [n for n in names if n.startswith(word)]
    return []


def command_score(query: str, name: str, name_score: float, text_score: float) -> float:
    """How well a command answers what was typed in the palette: its name first (typing
    `mark` means /mark, not /clear [MARK]), then its usage and summary."""
    typed = query.strip().lstrip("/").lower()
    # Tiers above any fuzzy score (the matcher's scores are not bounded by 1).
    if typed and name == typed:
        return 3000 + text_score
    if typed and name.startswith(typed):
        return 2000 + text_score
    if name_score > 0:
        return 1000 + name_score
    return text_score


class SlashCommands(Provider):
    """The command palette lists every slash command; choosing one starts it in the input."""

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for spec in REGISTRY:
            score = command_score(query, spec.name, matcher.match(spec.name),
                                  matcher.match(f"{spec.usage} {spec.summary}"))
            if score > 0:
                # Plain Content: highlight() would read "[MARK]" as markup and drop it.
                yield Hit(score, Content(spec.usage), partial(self._start, spec.name),
                          text=spec.usage, help=spec.summary)

    async def discover(self) -> Hits:
        for spec in REGISTRY:
            yield DiscoveryHit(Content(spec.usage), partial(self._start, spec.name),
                               text=spec.usage, help=spec.summary)

    def _start(self, name: str) -> None:
        starter: Callable[[str], None] | None = getattr(self.app, "start_command", None)
        if starter is not None:
            starter(name)
