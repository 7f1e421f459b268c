"""The PostgreSQL log's tables, in a schema of their own (`?schema=NAME`, `ikigai` by
default), and their versions: as for SQLite, each migration moves the version forward by
one; a log whose version is newer than this program's is refused, never changed.

What differs from SQLite: message text is indexed for /recall by PostgreSQL's own text
search (a `tsvector` column written with the event); a message's outline (its payload
without its text: what replay reads) is written beside it by the program; events are
kept immutable by a trigger; and ids are assigned in commit order under a
transaction-scoped advisory lock (store.py), so they are the feed's gapless position.
"""

from __future__ import annotations

SCHEMA_VERSION = 1

MIGRATIONS: dict[int, list[str]] = {
    1: [
        """CREATE TABLE agents (
            id TEXT PRIMARY KEY,
            parent_id TEXT REFERENCES agents(id),
            name TEXT,
            model TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'idle',
            created_at DOUBLE PRECISION NOT NULL,
            fork_event_id BIGINT,
            budget INTEGER,
            seq BIGSERIAL NOT NULL
        )""",
        "CREATE UNIQUE INDEX agents_name ON agents(name) WHERE name IS NOT NULL",
        """CREATE TABLE events (
            id BIGINT PRIMARY KEY,
            agent_id TEXT NOT NULL REFERENCES agents(id),
            kind TEXT NOT NULL,
            payload TEXT NOT NULL,
            outline TEXT,
            created_at DOUBLE PRECISION NOT NULL,
            search TSVECTOR
        )""",
        "CREATE INDEX events_agent ON events(agent_id, id)",
        "CREATE INDEX events_kind ON events(kind, agent_id) WHERE kind IN "
        "('mail', 'mail_read', 'usage')",
        "CREATE INDEX events_search ON events USING GIN (search)",
        """CREATE FUNCTION events_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
           BEGIN RAISE EXCEPTION 'events are immutable'; END $$""",
        """CREATE TRIGGER events_immutable BEFORE UPDATE OR DELETE ON events
           FOR EACH ROW EXECUTE FUNCTION events_immutable()""",
        """CREATE TABLE token_factors (
            model TEXT PRIMARY KEY,
            factor DOUBLE PRECISION NOT NULL,
            samples INTEGER NOT NULL
        )""",
        """CREATE TABLE leases (
            agent_id TEXT PRIMARY KEY,
            pid INTEGER NOT NULL,
            host TEXT NOT NULL,
            started_at DOUBLE PRECISION NOT NULL,
            renewed_at DOUBLE PRECISION NOT NULL
        )""",
        """CREATE TABLE message_vectors (
            seq BIGSERIAL PRIMARY KEY,
            model TEXT NOT NULL,
            low BIGINT NOT NULL,
            high BIGINT NOT NULL,
            ids BYTEA NOT NULL,
            tokens BYTEA NOT NULL,
            vectors BYTEA NOT NULL
        )""",
        "CREATE INDEX message_vectors_range ON message_vectors(model, low)",
        """CREATE TABLE message_tokens (
            seq BIGSERIAL PRIMARY KEY,
            encoding TEXT NOT NULL,
            low BIGINT NOT NULL,
            high BIGINT NOT NULL,
            ids BYTEA NOT NULL,
            tokens BYTEA NOT NULL
        )""",
        "CREATE INDEX message_tokens_range ON message_tokens(encoding, low)",
        """CREATE TABLE text_tokens (
            encoding TEXT NOT NULL,
            digest TEXT NOT NULL,
            tokens DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (encoding, digest)
        )""",
        # A batch's idempotency key: a commit whose acknowledgement was lost is not
        # written twice when it is sent again.
        """CREATE TABLE batches (
            key TEXT PRIMARY KEY,
            first_id BIGINT NOT NULL,
            last_id BIGINT NOT NULL
        )""",
    ],
}
