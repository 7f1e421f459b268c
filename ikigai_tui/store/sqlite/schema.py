"""Schema versions. Each migration moves `PRAGMA user_version` forward by one."""

from __future__ import annotations

from ikigai_tui.core.events import CONTEXT_MESSAGE_KINDS
from ikigai_tui.core.usage.ledger import TIER

SCHEMA_VERSION = 9

# Message text indexed for /recall: content for most kinds, the arguments of a tool call.
# `row` is `new` in the trigger, `events` in a re-index (migration 9).
def _fts_text(row: str) -> str:
    return (f"coalesce(json_extract({row}.payload, '$.content'), "
            f"json_extract({row}.payload, '$.arguments'), '')")


_FTS_TEXT = _fts_text("new")
# A payload longer than this (characters) has only its first FTS_LIMIT characters
# indexed, read from the JSON text itself: json_extract copies the whole payload twice,
# and FTS5 holds every distinct term of a row in memory until the row is written (a
# 10 MB message of varied text: +140 MB). Its JSON escapes for line breaks and tabs
# become spaces, so the words they separate are indexed as words. Such search engines
# as Lucene and Elasticsearch bound what one field indexes in the same way.
FTS_LIMIT = 1_000_000


def _fts_bounded(row: str) -> str:
    return (f"CASE WHEN length({row}.payload) <= {FTS_LIMIT} THEN {_fts_text(row)} "
            f"ELSE replace(replace(replace(replace(substr({row}.payload, 1, {FTS_LIMIT}), "
            "'{\"content\":\"', ' '), '\\n', ' '), '\\t', ' '), '\\r', ' ') END")


_FTS_BOUNDED = _fts_bounded("new")
_FTS_KINDS = "'system', 'user', 'assistant', 'tool_call', 'tool_result'"  # the messages indexed

_MESSAGES = ", ".join(f"'{k}'" for k in sorted(CONTEXT_MESSAGE_KINDS))
# A message's outline (core/replay/bodies.py: its payload without its text), made by SQLite
# (json_remove, in C): what an agent's replay reads, no text reaching Python. Indexed
# (migration 8) with the agent and id, so that the replay reads it from the index
# (SQLite's json_remove over a log's every payload was two thirds of the read).
OUTLINE = (f"CASE WHEN kind IN ({_MESSAGES}) THEN json_remove(payload, '$.content', "
           "'$.arguments') WHEN kind = 'pruned_summary' THEN json_remove(payload, "
           "'$.summary') ELSE payload END")
OUTLINE_INDEX = "events_outline"
OUTLINE_SINCE = 8  # the schema version that has it
FTS_PREFIXES = "1 2"  # the full-text index's prefix indexes (migration 9), in characters


def _usage_group(row: str) -> list[str]:
    """A usage event's group in `usage_totals`, and what it adds: agent, model, over TIER
    input tokens, input, output (`row` is `new` in the trigger, `events` in the backfill)."""
    tokens_in = f"coalesce(json_extract({row}.payload, '$.input_tokens'), 0)"
    return [f"{row}.agent_id", f"coalesce(json_extract({row}.payload, '$.model'), '')",
            f"{tokens_in} > {TIER}", tokens_in,
            f"coalesce(json_extract({row}.payload, '$.output_tokens'), 0)"]


_BACKFILL = ", ".join(f"{expr} AS c{n}" for n, expr in enumerate(_usage_group("events")))


def _fts_table(options: str) -> str:
    """The full-text index of the messages (contentless: the text is in the events)."""
    return f"""CREATE VIRTUAL TABLE message_fts USING fts5(
            text, content='', tokenize='unicode61 remove_diacritics 2'{options})"""


def _fts_trigger(text: str) -> str:
    """The trigger that indexes each new message's `text` (an SQL expression)."""
    return f"""CREATE TRIGGER events_fts AFTER INSERT ON events
           WHEN new.kind IN ({_FTS_KINDS})
           BEGIN INSERT INTO message_fts(rowid, text) VALUES (new.id, {text}); END"""


MIGRATIONS: dict[int, list[str]] = {
    1: [
        """CREATE TABLE agents (
            id TEXT PRIMARY KEY,
            parent_id TEXT REFERENCES agents(id),
            name TEXT,
            model TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'idle',
            created_at REAL NOT NULL,
            fork_event_id INTEGER,
            budget INTEGER
        )""",
        "CREATE UNIQUE INDEX agents_name ON agents(name) WHERE name IS NOT NULL",
        "CREATE INDEX agents_parent ON agents(parent_id)",
        """CREATE TABLE events (
            id INTEGER PRIMARY KEY,
            agent_id TEXT NOT NULL REFERENCES agents(id),
            kind TEXT NOT NULL,
            payload TEXT NOT NULL,
            created_at REAL NOT NULL
        )""",
        "CREATE INDEX events_agent ON events(agent_id)",
        # Small: serves the unread-mail counts without scanning the log.
        "CREATE INDEX events_mail ON events(agent_id, kind) WHERE kind IN ('mail', 'mail_read')",
        # The log is append-only: refuse edits at the database level too.
        """CREATE TRIGGER events_immutable_update BEFORE UPDATE ON events
           BEGIN SELECT RAISE(ABORT, 'events are immutable'); END""",
        """CREATE TRIGGER events_immutable_delete BEFORE DELETE ON events
           BEGIN SELECT RAISE(ABORT, 'events are immutable'); END""",
        # INSERT OR REPLACE deletes without firing delete triggers (unless recursive
        # triggers are on), so an insert over an existing id is refused here.
        """CREATE TRIGGER events_immutable_replace BEFORE INSERT ON events
           WHEN EXISTS (SELECT 1 FROM events WHERE id = new.id)
           BEGIN SELECT RAISE(ABORT, 'events are immutable'); END""",
        _fts_table(""),
        _fts_trigger(_FTS_TEXT),
    ],
    # The per-model correction factor of estimated token counts, learned from usage.
    2: [
        """CREATE TABLE token_factors (
            model TEXT PRIMARY KEY,
            factor REAL NOT NULL,
            samples INTEGER NOT NULL
        )""",
    ],
    # Bounded indexing of very long messages (see FTS_LIMIT); the same text as before
    # for every other message.
    3: [
        "DROP TRIGGER events_fts",
        _fts_trigger(_FTS_BOUNDED),
    ],
    # Leases: which process runs a turn of which agent (see store/sqlite/leases.py).
    4: [
        """CREATE TABLE leases (
            agent_id TEXT PRIMARY KEY,
            pid INTEGER NOT NULL,
            host TEXT NOT NULL,
            started_at REAL NOT NULL,
            renewed_at REAL NOT NULL
        )""",
    ],
    # The local matcher's message vectors, computed once per message and model and kept
    # in blocks (see store/sqlite/vectors.py): never recomputed per query.
    5: [
        """CREATE TABLE message_vectors (
            model TEXT NOT NULL,
            low INTEGER NOT NULL,
            high INTEGER NOT NULL,
            ids BLOB NOT NULL,
            tokens BLOB NOT NULL,
            vectors BLOB NOT NULL
        )""",
        "CREATE INDEX message_vectors_range ON message_vectors(model, low)",
    ],
    # Each message's token count, computed once per message and encoding (a tiktoken
    # encoding, or the bytes/4 estimate) and kept in blocks (see store/sqlite/tokens.py):
    # opening a log never recounts it.
    6: [
        """CREATE TABLE message_tokens (
            encoding TEXT NOT NULL,
            low INTEGER NOT NULL,
            high INTEGER NOT NULL,
            ids BLOB NOT NULL,
            tokens BLOB NOT NULL
        )""",
        "CREATE INDEX message_tokens_range ON message_tokens(encoding, low)",
        # The counts of the few texts outside the log that every request holds (the
        # system prompt with its pins, the tool definitions), by their digest: a log whose
        # counts are all kept is measured without loading a tokenizer.
        """CREATE TABLE text_tokens (
            encoding TEXT NOT NULL,
            digest TEXT NOT NULL,
            tokens REAL NOT NULL,
            PRIMARY KEY (encoding, digest)
        ) WITHOUT ROWID""",
    ],
    # Every agent's usage so far, summed as its usage events are written (a trigger, in
    # the same transaction), so `agents` and the tree's totals read a few rows instead of
    # decoding every usage event of the log (1.7 s at a million events).
    7: [
        """CREATE TABLE usage_totals (
            agent_id TEXT NOT NULL,
            model TEXT NOT NULL,
            above INTEGER NOT NULL,
            input INTEGER NOT NULL,
            output INTEGER NOT NULL,
            PRIMARY KEY (agent_id, model, above)
        ) WITHOUT ROWID""",
        f"""INSERT INTO usage_totals SELECT c0, c1, c2, SUM(c3), SUM(c4) FROM
            (SELECT {_BACKFILL} FROM events WHERE kind = 'usage') GROUP BY c0, c1, c2""",
        f"""CREATE TRIGGER events_usage AFTER INSERT ON events WHEN new.kind = 'usage'
           BEGIN INSERT INTO usage_totals VALUES ({", ".join(_usage_group("new"))})
           ON CONFLICT (agent_id, model, above) DO UPDATE
           SET input = input + excluded.input, output = output + excluded.output; END""",
    ],
    # Opening a long log reads each of its agents' outlines: from this index, not from
    # the payloads (100,000 messages: 0.08 s instead of 0.25 s). Each message written
    # adds its outline (a few bytes; its index entry, with the agent id: the log grows 5-14%).
    8: [f"CREATE INDEX {OUTLINE_INDEX} ON events(agent_id, id, kind, ({OUTLINE}))"],
    # Find (Ctrl+F) searches each word as typed, so a query of one or two letters ("k"*)
    # is asked at every keystroke; FTS5 answers a prefix by merging the doclists of every
    # term that starts with it (a 100,000-message log: up to 170 ms for the query alone).
    # Prefix indexes of one and two characters answer them from one doclist each (under
    # 10 ms; the log grows ~19%). FTS5 takes its prefix indexes only when the table is
    # made: the index is made again, from the events (the same text as the trigger's),
    # in the migration's one transaction (100,000 messages: ~3 s; a million: 31 s).
    9: [
        "DROP TRIGGER events_fts",
        "DROP TABLE message_fts",
        _fts_table(f", prefix='{FTS_PREFIXES}'"),
        f"""INSERT INTO message_fts(rowid, text) SELECT id, {_fts_bounded("events")}
            FROM events WHERE kind IN ({_FTS_KINDS}) ORDER BY id""",
        _fts_trigger(_FTS_BOUNDED),
    ],
}
