"""Database URLs (`--db postgresql://...`): which targets are URLs, and how one is shown
(never with its password: in the title, errors, logs, `ikigai paths`)."""

from __future__ import annotations

import os
from urllib.parse import parse_qsl, urlsplit, urlunsplit

URL_SCHEMES = ("postgresql://", "postgres://")


def is_url(target: str | os.PathLike) -> bool:
    """Whether `target` names a PostgreSQL database rather than a SQLite file."""
    return str(target).startswith(URL_SCHEMES)


def redact(url: str) -> str:
    """`url` with its password (and a `password=` parameter) replaced by `***`."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "postgresql://***"
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        if ":" in userinfo:
            userinfo = userinfo.split(":", 1)[0] + ":***"
        netloc = f"{userinfo}@{host}"
    query = "&".join(
        f"{k}=***" if k.lower() == "password" else (f"{k}={v}" if v else k)
        for k, v in parse_qsl(parts.query, keep_blank_values=True))
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def shown(target: str | os.PathLike) -> str:
    """A database as people see it: a file's path, or a URL without its password."""
    return redact(str(target)) if is_url(target) else str(target)
