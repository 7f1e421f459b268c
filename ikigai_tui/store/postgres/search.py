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


_TOKEN = re.compile(r'[()]|"(?:[^"]|"")*"\*?|[^\s()]+')
_OPERATORS = {"AND": "&", "OR": "|"}


def ts_query(query: str) -> str:
    """An FTS5 query (core/handlers/recall.py's fts_query: quoted words, required by
    default; `OR`, `AND` and parentheses grouping the forms of a word) as the same tsquery
    ("" when it has no word)."""
    out: list[str] = []
    for token in _TOKEN.findall(query):
        if token in _OPERATORS:
            out.append(_OPERATORS[token])
            continue
        if token in "()":
            if token == "(" and out and out[-1] not in ("&", "|", "("):
                out.append("&")
            out.append(token)
            continue
        star = token.endswith("*") and token.startswith('"')
        text = token[1:-2 if star else -1].replace('""', '"') if token.startswith('"') else token
        lexemes = _lexemes(text, star)
        if not lexemes:
            continue
        if out and out[-1] not in ("&", "|", "("):
            out.append("&")
        out.append(lexemes[0] if len(lexemes) == 1 else "(" + " & ".join(lexemes) + ")")
    return _tidy(out)


def _tidy(parts: list[str]) -> str:
    """The tokens without what a dropped word left behind: an operator with nothing on one
    side, empty parentheses."""
    changed = True
    while changed:
        changed = False
        for i, part in enumerate(parts):
            before = parts[i - 1] if i else None
            after = parts[i + 1] if i + 1 < len(parts) else None
            if part in ("&", "|") and (before in (None, "(", "&", "|") or after in (None, ")")):
                del parts[i]
                changed = True
                break
            if part == "(" and after == ")":
                del parts[i:i + 2]
                changed = True
                break
    return " ".join(parts)


def word_query(word: str) -> str:
    """One word (ending in * for every word starting with the rest) as a tsquery."""
    prefix = word.endswith("*")
    return " & ".join(_lexemes(word[:-1] if prefix else word, prefix))
