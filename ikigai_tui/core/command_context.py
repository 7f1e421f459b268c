"""What a command handler sees: the session, the agent, its replayed state, a batch to fill."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ikigai_tui.core.agents import AgentRuntime
from ikigai_tui.core.commands import ArgReader, CommandError, CommandSpec
from ikigai_tui.core.events import WriteBatch
from ikigai_tui.core.replay import Mark, Replayer

if TYPE_CHECKING:
    from ikigai_tui.core.session import Session


@dataclass
class Invocation:
    session: Session
    agent: AgentRuntime
    replayer: Replayer
    source: str  # human | llm
    spec: CommandSpec
    args: ArgReader
    batch: WriteBatch = field(default_factory=WriteBatch)
    after_commit: list[Callable[[], Any]] = field(default_factory=list)

    def add(self, kind: str, payload: dict[str, Any], agent_id: str | None = None) -> int:
        return self.batch.add(agent_id or self.agent.id, kind, payload)

    @property
    def tree(self):
        return self.session.tree

    def resolve_mark(self, name: str) -> Mark:
        """A valid mark of this agent, or an error naming it and listing the valid ones."""
        r = self.replayer
        mark = r.find_mark(name)
        if mark is None and name.startswith("#") and name[1:].isdigit():
            mark = next((m for m in r.valid_marks() if m.event_id == int(name[1:])), None)
        if mark is not None:
            return mark
        valid = [m.label for m in r.valid_marks()]
        listed = f"Valid marks: {', '.join(valid)}." if valid else "There are no valid marks."
        if name in r.mark_names_seen:
            raise CommandError(f"mark '{name}' is no longer valid (cleared or rewound past). {listed}")
        raise CommandError(f"no mark named '{name}'. {listed}")
