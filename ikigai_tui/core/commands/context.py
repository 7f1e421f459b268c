"""What a command handler sees: its agent and replayed context, a few services, a batch.

Not the session: a handler reads through `services` (the agent tree, model and budget
lookups, measuring) and writes only by adding events to `batch`; what must happen once
the batch is safely on disk (start a child's turn, cancel a killed agent's turn) goes in
`after_commit`, which the command bus runs only after the commit succeeded.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from ikigai_tui.core.agents import AgentRuntime, AgentTree
from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.commands.parse import ArgReader, CommandSpec
from ikigai_tui.core.events import Event, WriteBatch
from ikigai_tui.core.replay.replayer import Mark, Replayer

if TYPE_CHECKING:
    from ikigai_tui.core.replay.bodies import Bodies
    from ikigai_tui.core.matching import Matcher
    from ikigai_tui.core.notices import Notice
    from ikigai_tui.core.usage.ledger import UsageTotals
    from ikigai_tui.core.tokens.limits import Limits
    from ikigai_tui.core.tokens.window import ContextMeter, Window


class PendingRef(NamedTuple):
    """An event of a write deferred to the end of a turn, not committed yet: item
    `serial` of the queue, event `index` of its batch. Resolved to the event's id when
    that write is committed (an /undo of a /clear that waits for the same turn's end)."""

    serial: int
    index: int


class PendingOp(NamedTuple):
    ref: PendingRef
    kind: str
    payload: dict[str, Any]
    text: str = ""  # the command that made it


@dataclass(frozen=True)
class CommandServices:
    """The narrow view of the runtime that handlers may use."""

    tree: AgentTree
    new_id: Callable[[], str]
    check_model: Callable[[str], str]  # the full name; CommandError for an unusable model
    budget_of: Callable[[AgentRuntime], int]
    model_of: Callable[[AgentRuntime], str]
    measure: Callable[[str], Awaitable[Window]]
    meter: Callable[[AgentRuntime], ContextMeter]
    start_if_pending: Callable[[str], Any]
    cancel_turns: Callable[[list[str]], Awaitable[None]]
    notify: Callable[[Notice], None]
    # (agent, local, model or None) -> the matcher for /forget and /remember CRITERIA
    matcher: Callable[[AgentRuntime, bool, str | None], Matcher]
    usage: Callable[[str], Awaitable[UsageTotals]] | None = None  # an agent's usage so far
    # The log's pages of one agent's events (EventLog.page): when an event was made.
    page: Callable[..., Awaitable[list[Event]]] | None = None
    memory: Callable[[], Any] | None = None  # the session's MemoryService (core/memory)
    compactor: Any = None  # core.compaction.service.Compactor: /compact's summaries
    bodies: Bodies | None = None  # message text read from the log (core/replay/bodies.py)
    search: Callable[..., Awaitable[list[Event]]] | None = None  # full text (EventLog.search)
    # The other process running a turn of an agent now, if any (LeaseKeeper.elsewhere).
    elsewhere: Callable[[str], Awaitable[Any]] | None = None
    # A model -> a warning line when its messages will fail (no key set), else None.
    key_warning: Callable[[str], str | None] | None = None
    # A model -> its limits (core/tokens/limits.Limits: the input limit and its source).
    limits: Callable[[str], Limits] | None = None
    # Another agent's replayed state (Session.replayer): where an ancestor's mark lives.
    replayer: Callable[[str], Awaitable[Replayer]] | None = None
    # An agent's workspace (Session.workspace): where its file tools work.
    workspace: Callable[[str], Path] | None = None
    # /forget --tool-results's defaults (core/tool_results: ToolResultsSettings)
    tool_results: Callable[[], Any] | None = None
    # The session's MCP servers (core/tools/servers.py: ToolServers), None when none is set
    servers: Callable[[], Any] | None = None
    # /btw's side request: the agent's next request as planned now (Session.plan, with
    # messages) and the gateway it goes through.
    plan: Callable[..., Awaitable[Any]] | None = None
    gateway: Callable[[], Any] | None = None
    # Mail that acts (core/mailwake.py: MailWake): modes, /wait, the mail settings
    mail: Callable[[], Any] | None = None


@dataclass
class CommandContext:
    agent: AgentRuntime
    replayer: Replayer
    source: str  # human | llm
    spec: CommandSpec
    args: ArgReader
    services: CommandServices
    batch: WriteBatch = field(default_factory=WriteBatch)
    # Run in order once the batch is committed; a callback may return an awaitable.
    after_commit: list[Callable[[], Any]] = field(default_factory=list)
    # Run just before a batch held for the end of the agent's turn is committed (what the
    # turn added since may change it: filter_context's closing reply leaves with it).
    at_turn_end: list[Callable[[], None]] = field(default_factory=list)
    # This agent's writes waiting for its turn to end: the undoable events among them
    # (oldest first), and the undo targets they already claim.
    pending_ops: tuple[PendingOp, ...] = ()
    pending_undos: frozenset[int | PendingRef] = frozenset()

    def add(self, kind: str, payload: dict[str, Any], agent_id: str | None = None) -> int:
        return self.batch.add(agent_id or self.agent.id, kind, payload)

    @property
    def tree(self) -> AgentTree:
        return self.services.tree

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

    async def resolve_own_mark(self, name: str) -> Mark:
        """`resolve_mark`, and when the name is unknown here but an ancestor has such a
        mark, the error says where it lives: marks are per agent and a fork inherits none
        (SPEC section 4), which a child's user may not expect."""
        try:
            return self.resolve_mark(name)
        except CommandError as exc:
            if name in self.replayer.mark_names_seen or self.services.replayer is None:
                raise
            agents = self.tree.agents
            parent = agents.get(self.agent.parent_id or "")
            while parent is not None:
                if (await self.services.replayer(parent.id)).find_mark(name) is not None:
                    who = self.tree.label(parent.id)
                    raise CommandError(
                        f"{exc} '{name}' is a mark of {who}: marks are per agent and a fork "
                        f"inherits none (there, /fork {name} gives a child only what follows "
                        f"it).") from None
                parent = agents.get(parent.parent_id or "")
            raise
