"""The agent tree: lookup by name or id prefix, descendants, short ids."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.events import AgentRecord, Event
from ikigai_tui.core.replay.replayer import Replayer

SHORT_ID = 6


class TurnState:
    """The agent's live turn: its task, whether it is in a turn, the reply streaming now.

    Written only by the session's turn control (`begin`, `finishing`, `end`) and by the
    turn itself (`streaming`, `streamed`); everything else reads it through AgentRuntime.
    A turn is running, then finishing (the writes deferred to its end are committed: a
    command is no longer deferred, the agent still shows as working), then over."""

    __slots__ = ("task", "phase", "reply")

    def __init__(self) -> None:
        self.task: asyncio.Task | None = None
        self.phase: str | None = None  # running | finishing | None
        self.reply: list[str] | None = None  # the pieces of the reply streaming now

    def begin(self, task_of: Callable[[], asyncio.Task]) -> asyncio.Task:
        self.phase = "running"
        self.task = task_of()
        return self.task

    def finishing(self) -> None:
        self.phase = "finishing"

    def end(self) -> None:
        self.phase = None

    @property
    def active(self) -> bool:
        """In a turn: commands that wait for its end are deferred."""
        return self.phase == "running"

    def streaming(self) -> list[str]:
        """A new reply begins: its pieces go in the list returned."""
        self.reply = []
        return self.reply

    def streamed(self) -> None:
        self.reply = None

    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done()


@dataclass
class AgentRuntime:
    """One agent as the running program knows it, in three parts with one writer each:

    - what the log says (id ... budget, `killed`, `unread`): set from the agents row and
      changed only by `apply_update` (a committed update) and the replay cache (mail counts);
    - the replayed state (`replayer`), a cache the replay cache fills;
    - the live turn (`turn`), written only by the session's turn control.

    `status` is derived from the first and the last: dead, working or idle."""

    id: str
    parent_id: str | None
    name: str | None
    model: str
    killed: bool
    created_at: float
    fork_event_id: int | None = None
    budget: int | None = None
    unread: int = 0
    replayer: Replayer | None = None
    turn: TurnState = field(default_factory=TurnState)

    @classmethod
    def from_record(cls, rec: AgentRecord) -> AgentRuntime:
        return cls(rec.id, rec.parent_id, rec.name, rec.model, rec.status == "dead",
                   rec.created_at, rec.fork_event_id, rec.budget)

    def apply_update(self, column: str, value: Any) -> None:
        """A committed change of the agents row (`WriteBatch.agent_updates`)."""
        if column == "status":
            self.killed = value == "dead"
        elif column in ("model", "name"):
            setattr(self, column, value)
        else:
            raise ValueError(f"no agent column {column!r}")

    @property
    def status(self) -> str:
        """dead | working | idle."""
        return "dead" if self.killed else "working" if self.turn.phase else "idle"

    @property
    def dead(self) -> bool:
        return self.killed

    @property
    def in_turn(self) -> bool:
        return self.turn.active

    @property
    def task(self) -> asyncio.Task | None:
        """The task of the agent's latest turn (done once it ended), or None."""
        return self.turn.task

    @property
    def busy(self) -> bool:
        """A turn of this agent is running in this process."""
        return self.turn.running

    def reply_so_far(self) -> tuple[str, int] | None:
        """The reply streaming now (its text, its number of pieces), or None."""
        reply = self.turn.reply
        return ("".join(reply), len(reply)) if reply else None


class AgentTree:
    def __init__(self) -> None:
        self.agents: dict[str, AgentRuntime] = {}

    def add(self, agent: AgentRuntime) -> None:
        self.agents[agent.id] = agent

    def __getitem__(self, agent_id: str) -> AgentRuntime:
        return self.agents[agent_id]

    def __contains__(self, agent_id: str) -> bool:
        return agent_id in self.agents

    def __iter__(self) -> Iterator[AgentRuntime]:
        return iter(self.agents.values())

    def __len__(self) -> int:
        return len(self.agents)

    @property
    def root(self) -> AgentRuntime | None:
        for agent in self.agents.values():
            if agent.parent_id is None:
                return agent
        return None

    def children(self, agent_id: str) -> list[AgentRuntime]:
        return [a for a in self.agents.values() if a.parent_id == agent_id]

    def descendants(self, agent_id: str) -> list[AgentRuntime]:
        out: list[AgentRuntime] = []
        stack = list(reversed(self.children(agent_id)))
        while stack:
            agent = stack.pop()
            out.append(agent)
            stack.extend(reversed(self.children(agent.id)))
        return out

    def is_descendant(self, agent_id: str, ancestor_id: str) -> bool:
        parent = self.agents[agent_id].parent_id
        while parent is not None:
            if parent == ancestor_id:
                return True
            parent = self.agents[parent].parent_id
        return False

    def lineage(self, agent_id: str) -> list[AgentRuntime]:
        """The agent and its ancestors, root first."""
        chain = [self.agents[agent_id]]
        while chain[-1].parent_id is not None:
            chain.append(self.agents[chain[-1].parent_id])
        return list(reversed(chain))

    def walk(self) -> Iterator[tuple[AgentRuntime, int]]:
        """Depth-first, in creation order: (agent, depth)."""
        roots = [a for a in self.agents.values() if a.parent_id is None]
        stack = [(a, 0) for a in reversed(roots)]
        while stack:
            agent, depth = stack.pop()
            yield agent, depth
            stack.extend((c, depth + 1) for c in reversed(self.children(agent.id)))

    def short_id(self, agent_id: str) -> str:
        """The shortest prefix of at least 6 characters that no other agent shares."""
        others = [a for a in self.agents if a != agent_id]
        length = SHORT_ID
        while length < len(agent_id) and any(o.startswith(agent_id[:length]) for o in others):
            length += 1
        return agent_id[:length]

    def label(self, agent_id: str) -> str:
        agent = self.agents[agent_id]
        short = self.short_id(agent_id)
        return f"{agent.name} ({short})" if agent.name else short

    def resolve(self, ref: str) -> AgentRuntime:
        """An agent by name or by a unique prefix of its id."""
        for agent in self.agents.values():
            if agent.name == ref:
                return agent
        matches = [a for a in self.agents.values() if a.id.startswith(ref)] if ref else []
        if len(matches) == 1:
            return matches[0]
        if not matches:
            raise CommandError(f"no agent named or with id starting '{ref}'. See /agents.")
        shown = ", ".join(self.short_id(a.id) for a in matches[:5])
        raise CommandError(f"'{ref}' matches several agents ({shown}); give more of the id")


def derive_agents(events: Iterable[Event], roots: Iterable[AgentRecord]) -> list[AgentRecord]:
    """The agents rows as the log says them: a pure function of the events (those of
    kinds fork, model, kill, revive, rename are enough) and each root's genesis record (its id,
    creation time and first model: a root has no fork event to carry them).

    A child comes from its own `fork` event (parent, parent_event, name, model, budget,
    the event's time); a `model` event changes the model, a `kill` makes it dead, a
    `revive` alive again, a `rename` its name. (Older fork events carry no name: the
    store's rebuild keeps such a child's name from its row.)"""
    out: dict[str, AgentRecord] = {r.id: r._replace(status="idle") for r in roots}
    for e in events:
        p = e.payload
        if e.kind == "fork" and "parent" in p and e.agent_id not in out:
            out[e.agent_id] = AgentRecord(
                e.agent_id, p["parent"], p.get("name"), p.get("model") or "", "idle",
                e.created_at, p.get("parent_event"), p.get("budget"))
        elif e.agent_id not in out:
            continue
        elif e.kind == "model" and p.get("model"):
            out[e.agent_id] = out[e.agent_id]._replace(model=p["model"])
        elif e.kind == "kill":
            out[e.agent_id] = out[e.agent_id]._replace(status="dead")
        elif e.kind == "revive":
            out[e.agent_id] = out[e.agent_id]._replace(status="idle")
        elif e.kind == "rename" and p.get("name"):
            out[e.agent_id] = out[e.agent_id]._replace(name=p["name"])
    return list(out.values())
