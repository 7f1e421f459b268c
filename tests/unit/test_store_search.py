"""The SQLite event log (SPEC §3), full-text search: message text is indexed and found per
agent, metadata (marks, commands, mail, usage...) never is, even under a `content` field;
words match regardless of case and accents, prefixes only with `*`; and a refused batch
leaves nothing searchable behind.
"""

from __future__ import annotations

import sqlite3

import pytest

from ikigai_tui.core.ports import ConflictError
from ikigai_tui.core.events import EventRef, WriteBatch
from tests.unit.store_helpers import open_with_agents


# -- full-text search ----------------------------------------------------------


async def test_fts_finds_message_text_and_not_metadata(tmp_path):
    store = await open_with_agents(tmp_path / "x.db", "a", "b")
    try:
        batch = WriteBatch()
        user = batch.add("a", "user", {"content": "tell me about the zebrafish"})
        reply = batch.add("a", "assistant", {"content": "the aardvark digs burrows"})
        call = batch.add("a", "tool_call", {"call_id": "c1", "name": "slash",
                                            "arguments": '{"command": "recall", "args": "xylophone"}'})
        result = batch.add("a", "tool_result", {"call_id": "c1", "call_event": EventRef(call),
                                                "content": "found the quokka", "is_error": False})
        system = batch.add("a", "system", {"content": "you are a narwhal"})
        # Metadata never enters the index, even when a payload has a `content` field.
        batch.add("a", "mark", {"name": "wombat"})
        batch.add("a", "command", {"text": "/mark wombat", "source": "human",
                                   "output": ["Checkpoint 'wombat' created."]})
        batch.add("a", "mail", {"from": "b", "text": "wombat mail"})
        batch.add("a", "compact", {"ids": [], "summary": "wombat summary"})
        batch.add("a", "interrupted", {"content": "wombat content in metadata"})
        batch.add("a", "usage", {"model": "wombat", "input_tokens": 1, "output_tokens": 1})
        batch.add("b", "user", {"content": "another zebrafish, in agent b"})
        events = await store.write(batch)
        ids = [e.id for e in events]

        async def found(query: str, agents=("a",)) -> list[int]:
            return sorted(e.id for e in await store.search(query, list(agents)))

        assert await found("zebrafish") == [ids[user]]
        assert await found("zebrafish", ("a", "b")) == sorted([ids[user], ids[-1]])
        assert await found("zebrafish", ("b",)) == [ids[-1]]
        assert await found("aardvark") == [ids[reply]]
        assert await found("xylophone") == [ids[call]]
        assert await found("quokka") == [ids[result]]
        assert await found("narwhal") == [ids[system]]
        assert await found("wombat") == []
        assert await found("checkpoint") == []
        hits = await store.search("aardvark", ["a"])
        assert hits[0].kind == "assistant" and hits[0].payload["content"].startswith("the aardvark")
    finally:
        await store.close()


async def test_fts_matches_words_case_and_accent_insensitively(tmp_path):
    store = await open_with_agents(tmp_path / "x.db", "a")
    try:
        event = await store.append("a", "user", {"content": "Meet me at the Café Müller"})
        assert [e.id for e in await store.search("cafe", ["a"])] == [event.id]
        assert [e.id for e in await store.search("MULLER", ["a"])] == [event.id]
        assert await store.search("caf", ["a"]) == []
        assert [e.id for e in await store.search("caf*", ["a"])] == [event.id]
    finally:
        await store.close()


async def test_fts_index_is_transactional_with_the_events(tmp_path):
    """A refused batch leaves nothing searchable behind."""
    store = await open_with_agents(tmp_path / "x.db", "a")
    try:
        bad = WriteBatch()
        bad.add("a", "user", {"content": "phantomword appears"})
        bad.add("missing-agent", "user", {"content": "never"})
        with pytest.raises(ConflictError):
            await store.write(bad)
        assert await store.search("phantomword", ["a"]) == []
        assert await store.count_events() == 0
    finally:
        await store.close()
