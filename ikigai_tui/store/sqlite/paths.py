"""The database's place on disk: new folders 0700 and new files 0600 whatever the umask,
existing files never re-moded, and whether a file can be written before SQLite tries."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from urllib.parse import quote

from ikigai_tui.support.folders import make_private_folders
from ikigai_tui.store.sqlite.errors import READERS_STILL_WORK, StoreError


def sidecars(path: Path) -> tuple[Path, Path]:
    """SQLite's write-ahead log and its shared-memory index, beside the database."""
    return path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")


def file_state(path: Path) -> os.stat_result | None:
    """The file's stat, None when it does not exist; a folder that cannot be searched
    is a StoreError (Path.exists would raise PermissionError)."""
    try:
        return path.stat()
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        raise StoreError(f"cannot open {path}: a part of the path is not a folder") from None
    except OSError as exc:
        raise StoreError(f"cannot open {path}: {exc.strerror}") from exc


def make_folders(folder: Path) -> None:
    """Create the folder and each missing parent 0700; folders that exist are left alone."""
    try:
        make_private_folders(folder)
    except NotADirectoryError:
        raise StoreError(f"cannot open {folder}: a part of the path is not a folder") from None
    except OSError as exc:
        raise StoreError(f"cannot create the folder {exc.filename or folder}: {exc.strerror}") from exc


def make_file(path: Path) -> None:
    """Create an empty database file 0600 (SQLite gives its -wal and -shm the same mode)."""
    make_folders(path.parent)
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_CLOEXEC, 0o600)
    except FileExistsError:
        return  # another process is creating it: leave its file as it made it
    except OSError as exc:
        raise StoreError(f"cannot create {path}: {exc.strerror}") from exc
    try:
        os.fchmod(fd, 0o600)  # exactly, whatever the umask
    finally:
        os.close(fd)


def _read_only_mount(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def write_problem(path: Path, st: os.stat_result) -> str | None:
    """Why an existing database cannot be written, checked before SQLite opens it (which
    would otherwise fail on the first write, or, for root, write to a file marked 0444)."""
    if _read_only_mount(path):
        return "it is on a file system mounted read-only"
    mode = stat.S_IMODE(st.st_mode)
    # Root may write anything: a file whose every write bit is off was made read-only on
    # purpose, and is treated as such by every user.
    if not mode & 0o222 or not os.access(path, os.W_OK):
        return f"the file is read-only (mode {mode:04o})"
    folder = path.parent
    if not os.access(folder, os.W_OK | os.X_OK):
        wal, shm = sidecars(path)
        # A WAL database needs its -wal and -shm: they must exist and be writable if the
        # folder does not let SQLite create them.
        if not all(p.exists() and os.access(p, os.W_OK) for p in (wal, shm)):
            return f"its folder {folder} is read-only"
    return None


def refuse_writes(path: Path, problem: str) -> StoreError:
    return StoreError(f"cannot write to {path}: {problem}; {READERS_STILL_WORK}")


def wal_is_empty(path: Path) -> bool:
    """True when nothing is waiting in the write-ahead log: the database file alone then
    holds every committed event (SQLite merges and removes the log when the last writer
    closes)."""
    wal, _ = sidecars(path)
    try:
        return wal.stat().st_size == 0
    except FileNotFoundError:
        return True
    except OSError:
        return False


def read_only_uri(path: Path, *, immutable: bool = False) -> str:
    """An SQLite URI that opens the file read-only. `immutable=1` is SQLite's documented
    way to read a WAL database whose -wal and -shm are missing and cannot be created (a
    read-only folder or mount): it then takes no locks and reads the file alone."""
    query = "immutable=1" if immutable else "mode=ro"
    return f"file:{quote(str(path.absolute()))}?{query}"
