"""/recall and the local matcher's word lookups on PostgreSQL's own text search: each
message's text (its content, or a tool call's arguments) is indexed as a `tsvector` of
the `simple` configuration (words as written, lower-cased, as SQLite's unicode61), and the
queries, written for FTS5 (`"word" "other"*`), are read as words that must all appear."""

from __future__ import annotations

import re
from typing import Any

# The kinds whose text is indexed (as SQLite's trigger does).
INDEXED = frozenset({"system", "user", "assistant", "tool_call", "tool_result"})
# Characters of a message indexed: to_tsvector refuses a result over 1 MB, and a long
# message's words mostly repeat (SQLite bounds its index the same way, at 1,000,000).
SEARCH_LIMIT = 200_000
_TERM = re.compile(r'"((?:[^"]|"")*)"(\*?)|(\S+)')
_WORD = re.compile(r"\w+", re.UNICODE)


def search_text(kind: str, payload: dict[str, Any]) -> str | None:
    if kind not in INDEXED:
        return None
    text = payload.get("content")
    if not isinstance(text, str):
        text = payload.get("arguments")
    if not isinstance(text, str) or not text:
        return None
    return text[:SEARCH_LIMIT].replace("\x00", " ")


def _lexemes(text: str, prefix: bool) -> list[str]:
    words = [w.lower() for w in _WORD.findall(text)]
    out = [f"'{w}'" for w in words]
    if prefix and out:
        out[-1] += ":*"
    return out


def ts_query(query: str) -> str:
    """An FTS5 query of quoted words (core/handlers/recall.py's fts_query) as a tsquery
    of the same words, all required ("" when it has no word)."""
    lexemes: list[str] = []
    for quoted, star, bare in _TERM.findall(query):
        text = quoted.replace('""', '"') if quoted or star else bare
        lexemes.extend(_lexemes(text, bool(star)))
    return " & ".join(lexemes)


def word_query(word: str) -> str:
    """One word (ending in * for every word starting with the rest) as a tsquery."""
    prefix = word.endswith("*")
    return " & ".join(_lexemes(word[:-1] if prefix else word, prefix))
