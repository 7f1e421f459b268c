"""Every folder the program creates (the database's, the config's, the logs', the memory
sandbox's) is made here: exactly 0700 whatever the umask, parents included, so nothing
of the user's is open to others. A folder that exists already is the user's own (or was
made meanwhile by another process) and is never re-moded."""

from __future__ import annotations

import os
from pathlib import Path

PRIVATE = 0o700
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def make_private_folders(folder: str | os.PathLike) -> None:
    """`folder` and each of its missing parents, created 0700. Raises OSError (its
    `filename` the folder that failed)."""
    missing: list[Path] = []
    current = Path(folder)
    while current != current.parent:
        try:
            os.stat(current)
            break
        except FileNotFoundError:
            missing.append(current)
            current = current.parent
    for item in reversed(missing):
        make_private_folder(item)


def make_private_folder(name: str | os.PathLike, *, dir_fd: int | None = None) -> bool:
    """One folder (below `dir_fd` if given), 0700 exactly; False when it exists already.
    Raises OSError."""
    try:
        os.mkdir(name, PRIVATE, dir_fd=dir_fd)
    except FileExistsError:
        return False
    # mkdir's mode passes through the umask, which can only take bits away (a umask of
    # 0200 would even make it unwritable): set exactly 0700 on what was made, through a
    # descriptor that refuses a symlink put in its place meanwhile.
    fd = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    try:
        os.fchmod(fd, PRIVATE)
    finally:
        os.close(fd)
    return True
