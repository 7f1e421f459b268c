"""What the event log says when its file fails: one line for the user, never a traceback.

SQLite reports a damaged page, a full disk or a read-only file as sqlite3.DatabaseError
wherever the fault is met (at open, in a read hours later, in a commit). The store turns
each into a StoreError whose message names the file and says what can be done.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from ikigai_tui.core.ports import ConflictError, StoreError

__all__ = ["ConflictError", "StoreError", "translate", "primary_code"]

# Primary SQLite result codes (https://www.sqlite.org/rescode.html).
SQLITE_PERM = 3
SQLITE_BUSY = 5
SQLITE_LOCKED = 6
SQLITE_NOMEM = 7
SQLITE_READONLY = 8
SQLITE_IOERR = 10
SQLITE_CORRUPT = 11
SQLITE_FULL = 13
SQLITE_CANTOPEN = 14
SQLITE_NOTADB = 26

SQLITE_MAGIC = b"SQLite format 3\x00"

READERS_STILL_WORK = "`ikigai log`, `context`, `agents` and `export` can still read it"


def primary_code(exc: BaseException) -> int | None:
    """The primary result code of an sqlite3 error (Python 3.11+ carries the extended one)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return int(code) & 0xFF
    text = str(exc).lower()  # older Pythons: only the message
    for needle, value in (("malformed", SQLITE_CORRUPT), ("not a database", SQLITE_NOTADB),
                          ("disk is full", SQLITE_FULL), ("readonly", SQLITE_READONLY),
                          ("disk i/o", SQLITE_IOERR), ("locked", SQLITE_BUSY),
                          ("unable to open", SQLITE_CANTOPEN)):
        if needle in text:
            return value
    return None


def recover_hint(path: Path) -> str:
    return (f"run `ikigai --db {shlex.quote(str(path))} check --recover NEW.db` to save what "
            "can still be read into a new database")


def damaged(path: Path, detail: str) -> StoreError:
    return StoreError(f"the database {path} is damaged ({detail}); {recover_hint(path)}")


def looks_like_sqlite(path: Path) -> bool:
    try:
        with open(path, "rb") as handle:
            return handle.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
    except OSError:
        return False


def translate(exc: BaseException, path: Path, *, writing: bool = False) -> StoreError:
    """The one-line StoreError for a failure of the database at `path`."""
    code = primary_code(exc)
    detail = str(exc)
    verb = "write to" if writing else "read"
    if code == SQLITE_CORRUPT or (code == SQLITE_NOTADB and looks_like_sqlite(path)):
        return damaged(path, detail)
    if code == SQLITE_NOTADB:
        return StoreError(f"{path} is not an ikigai database ({detail}): it is not an "
                          "SQLite file, or its first page is damaged; it was not changed")
    if code == SQLITE_FULL:
        return StoreError(f"cannot write to {path}: the disk is full; this change was not "
                          "saved, everything saved before it is kept")
    if code == SQLITE_READONLY:
        return StoreError(f"cannot write to {path}: it is read-only ({detail}); "
                          f"{READERS_STILL_WORK}")
    if code in (SQLITE_BUSY, SQLITE_LOCKED):
        return StoreError(f"{path} is locked by another program ({detail}); try again later")
    if code == SQLITE_IOERR:
        return StoreError(f"cannot {verb} {path}: input/output error ({detail}); the disk "
                          "may be failing or full")
    if code in (SQLITE_CANTOPEN, SQLITE_PERM):
        return StoreError(f"cannot open {path}: {detail}")
    if code == SQLITE_NOMEM:
        return StoreError(f"out of memory while using {path}")
    return StoreError(f"cannot {verb} {path}: {detail}")
