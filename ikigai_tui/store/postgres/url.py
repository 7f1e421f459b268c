"""A `--db postgresql://...` URL: the schema it names (`?schema=NAME`, or
`options=-csearch_path=NAME`), what the driver is given, and how it is shown (never
with its password)."""

from __future__ import annotations

import re
from typing import NamedTuple
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from ikigai_tui.core.ports import StoreError
from ikigai_tui.support.urls import redact

DEFAULT_SCHEMA = "ikigai"
_SCHEMA = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
_SEARCH_PATH = re.compile(r"-c\s*search_path\s*=\s*([^\s,]+)")


class Target(NamedTuple):
    dsn: str  # for the driver: the URL without our own `schema` parameter
    schema: str
    shown: str  # the URL for people: no password


def parse(url: str) -> Target:
    """The driver's URL and the schema; StoreError (one line, no password) for a URL that
    cannot name a database."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (raises on a port that is not a number)
    except ValueError as exc:
        raise StoreError(f"{redact(url)} is not a PostgreSQL URL ({exc})") from None
    params = parse_qsl(parts.query, keep_blank_values=True)
    schema = None
    kept = []
    for key, value in params:
        if key == "schema":
            schema = value
            continue
        if key == "options":
            found = _SEARCH_PATH.search(unquote(value))
            if found:  # the search path is set from the schema (the driver's settings)
                schema = schema or found.group(1).strip('"')
                continue
        kept.append((key, value))
    schema = schema or DEFAULT_SCHEMA
    if not _SCHEMA.match(schema):
        raise StoreError(f"{redact(url)}: schema '{schema}' must be letters, digits and '_' "
                         "(not starting with a digit), at most 63")
    dsn = urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(kept), parts.fragment))
    return Target(dsn, schema, redact(url))
