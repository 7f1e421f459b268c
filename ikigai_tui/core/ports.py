"""What the core needs from persistence, as interfaces: the event log, search, small state.

The SQLite implementation lives in `ikigai_tui.store.sqlite`; another backend (PostgreSQL,
say) implements the same protocols and passes `tests/contract`. Backends translate their
own errors here: a database that cannot be used raises StoreError (a message for the
user), a constraint another writer won (a name taken, say) raises ConflictError; nothing
else escapes, so the core never imports a driver.

The contract every backend guarantees:

- **Atomic batches.** `write(batch)` commits all of the batch or nothing.
- **Ids in commit order.** Event ids are positive integers assigned at commit; a batch
  committed after another (by any writer, in any process) has greater ids, and the ids of
  one batch are consecutive. So "every event with id > N" is a well-defined suffix of the
  log that only ever grows at its end: `tail(after)` never returns an id below one it
  returned before, and a reader that has applied everything up to N misses nothing by
  asking for the events after N.
- **Immutability.** A committed event is never changed or removed.
- **One feed.** The commit hooks see every committed event exactly once and in id order,
  this process's own writes (right after their commit) and, once `start_feed` has been
  called, other writers' too (polled while the log is open).
"""

from __future__ import annotations

from collections.abc import AsyncIterable, Callable, Iterable, Sequence
from typing import Any, NamedTuple, Protocol

from ikigai_tui.core.events import AgentRecord, Event, EventRow, WriteBatch


class StoreError(Exception):
    """A database that cannot be used; the message is meant for the user."""


class CannotOpen(StoreError):
    """The database named cannot be reached or opened (no server there, a password
    refused, no such database): a setting to fix, told before anything starts."""


class ConflictError(StoreError):
    """Another writer got there first (an agent of the same name, an unknown agent):
    nothing of the batch was written."""


# (events in id order, agents created, (agent_id, column, value) updates)
CommitHook = Callable[[list[Event], list[AgentRecord], list[tuple[str, str, Any]]], None]


class Holder(NamedTuple):
    """Who holds a lease on an agent: a process on a host."""

    pid: int
    host: str
    started_at: float
    renewed_at: float


class EventLog(Protocol):
    readonly: bool

    async def write(self, batch: WriteBatch) -> list[Event]: ...

    async def append(self, agent_id: str, kind: str, payload: dict) -> Event: ...

    def add_commit_hook(self, hook: CommitHook, *, with_origin: bool = False) -> None: ...

    async def start_feed(self) -> int:
        """Start delivering other writers' events to the hooks; returns the id after
        which they are delivered (every event up to it is already in the log)."""

    async def tail(self, after: int, limit: int | None = None) -> list[Event]:
        """Events with id > after, committed by any writer, in id order."""

    async def agent_rows(self, agent_id: str, upto: int | None = None) -> list[EventRow]: ...

    async def agent_outline(self, agent_id: str, upto: int | None = None) -> Sequence[EventRow]:
        """As agent_rows, but each message's payload is its outline (core/replay/bodies.py:
        all but `content` and `arguments`): what replay needs, not the text."""

    async def payloads(self, ids: Sequence[int]) -> dict[int, dict]:
        """The payloads of the events `ids` (batched by the caller; ids not in the log
        are left out)."""

    async def events(self, agent_id: str | None = None, *, after: int = 0,
                     limit: int | None = None) -> list[Event]: ...

    async def page(self, agent_id: str, kinds: Iterable[str], *, before: int | None = None,
                   after: int | None = None, limit: int = 100) -> list[Event]: ...

    async def page_keys(self, agent_id: str, kinds: Iterable[str]) -> Sequence[int]: ...

    async def agents(self) -> list[AgentRecord]: ...

    async def unread_counts(self) -> dict[str, int]: ...

    async def count_events(self) -> int: ...

    async def max_event_id(self) -> int: ...

    async def close(self) -> None: ...


class Search(Protocol):
    async def search(self, query: str, ids: Iterable[str], limit: int = 50) -> list[Event]:
        """Full-text search over the messages of the given agents, best match first."""

    async def search_keys(self, query: str, ids: Iterable[str],
                          limit: int = 5000) -> list[tuple[int, str]]:
        """The same search, newest first: (event id, agent id) only, no payload read (find
        as you type in a pane: tui/find.py)."""


class VectorBlock(NamedTuple):
    """Vectors of some messages, packed little-endian: `ids` (int64, ascending) and
    `tokens` (int64) one per message; `vectors` in the matcher's encoding (opaque to the
    store; core/matching/local_vectors.py)."""

    ids: bytes
    tokens: bytes
    vectors: bytes


class MatchIndex(Protocol):
    """What the local matcher keeps and asks (core/matching/local.py): message vectors,
    computed once per (model, message) and kept in blocks, and which messages hold a word."""

    async def message_vectors(self, model: str, low: int, high: int) -> list[VectorBlock]:
        """The kept blocks of `model` that hold a message id in [low, high], in the order
        they were kept (a message kept twice: its first vector is the one that counts)."""

    async def save_message_vectors(self, model: str, block: VectorBlock) -> None:
        """Keep a block. A read-only log raises StoreError."""

    async def word_hits(self, words: Sequence[str], low: int, high: int) -> dict[str, list[int]]:
        """For each word, the ids in [low, high] of the messages whose indexed text holds
        it as a term; a word ending in * matches every term starting with the rest."""


class TokenBlock(NamedTuple):
    """Kept token counts of some messages, packed little-endian: `ids` (int64, ascending)
    and `tokens` (float64, the counter's raw count) one per message."""

    ids: bytes
    tokens: bytes


class TokenCounts(Protocol):
    """Per-message token counts, computed once per (encoding, message) and kept in blocks
    (core/tokens/kept.py): opening a log never recounts it."""

    async def token_blocks(self, encoding: str, low: int, high: int) -> list[TokenBlock]:
        """The kept blocks of `encoding` that hold a message id in [low, high], in the
        order they were kept."""

    async def save_token_block(self, encoding: str, block: TokenBlock) -> None:
        """Keep a block. A read-only log raises StoreError."""

    async def text_tokens(self, encoding: str, digests: Iterable[str]) -> dict[str, float]:
        """Kept counts of texts outside the log (system prompt, tools), by digest."""

    async def save_text_tokens(self, encoding: str, counts: dict[str, float]) -> None:
        """Keep counts of texts by digest (a digest kept already keeps its count). A
        read-only log raises StoreError."""


class SmallState(Protocol):
    async def token_factors(self) -> dict[str, tuple[float, int]]: ...

    async def usage_sums(self, tier: int) -> list[tuple[str, str, bool, int, int]]:
        """(agent, model, over `tier` input tokens, input, output) of the usage events,
        summed per group."""

    async def acquire_lease(self, agent_id: str, pid: int, host: str,
                            gone: list[Holder] | None = None) -> Holder | None:
        """Take (or renew) the agent's lease for this process. Returns None when taken,
        else the live holder that keeps it (nothing is written then). A lease whose
        process is gone (same host, no such pid, or a zombie) or that was not renewed for
        a while is taken over: its holder is appended to `gone` (the turn it ran died
        with it)."""

    async def release_lease(self, agent_id: str, pid: int, host: str) -> None: ...

    async def lease_holder(self, agent_id: str) -> Holder | None:
        """Who holds the agent's lease, live or stale (reads only)."""

    async def renew_leases(self, agent_ids: Iterable[str], pid: int, host: str) -> None: ...


class LogImport(Protocol):
    """A whole log written as it is (`ikigai copy` between engines): not part of a
    session's Persistence, whose `write` assigns ids and times."""

    async def import_log(self, agents: Sequence[AgentRecord],
                         pages: AsyncIterable[Sequence[Event]],
                         factors: dict[str, tuple[float, int]]) -> int:
        """Write the agents, then every event of `pages` (in id order, read as they come)
        with its id, agent, kind, payload and created_at unchanged, then the token
        factors: in one transaction, into a log with no agent and no event only (else
        ConflictError, nothing written). Returns how many events were written. Derived
        state (search, outlines, usage sums) is made as for any write; kept token counts
        and message vectors are not copied (they are recomputed when needed)."""


class Persistence(EventLog, Search, MatchIndex, TokenCounts, SmallState, Protocol):
    """Everything the session uses: one object per open database."""
