"""The memories folder, sandboxed: every path the LLM names stays inside it.

Paths are given as in Anthropic's memory tool, `/memories/notes/a.md`, rooted at the
folder. `locate` checks a path in words first (no `..`, no `.` names, nothing outside
`/memories`, no `/memories-evil` sibling) and then on disk (no symlink, no device or
fifo on the way), for clear messages. That check is not what keeps a path inside:
between it and the open a symlink may be swapped in, so every open walks from the
folder's own descriptor one component at a time with O_NOFOLLOW (`os.open(...,
dir_fd=...)`), and a file is used only once fstat says it is a regular file. Writes go
to a temporary file in the same directory and are renamed over the name: a rename
replaces a directory entry and never writes through a link.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ikigai_tui.support.folders import make_private_folder, make_private_folders

PREFIX = "/memories"
MAX_NAME = 255  # bytes of one name
MAX_DEPTH = 16  # folders below /memories
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


class MemoryRefused(Exception):
    """A memory command that cannot run: the message says why; nothing was changed."""


@dataclass(frozen=True)
class MemoryLimits:
    file_bytes: int = 1_000_000
    files: int = 200
    total_bytes: int = 20_000_000


@dataclass(frozen=True)
class Location:
    """A checked path: its components below the folder, and the path as given."""

    parts: tuple[str, ...]
    path: str

    @property
    def is_root(self) -> bool:
        return not self.parts


def parse(path: object) -> Location:
    """The components of a /memories path, or MemoryRefused (checked in words only)."""
    if not isinstance(path, str) or not path:
        raise MemoryRefused("a path is needed, like /memories/notes.md")
    if "\x00" in path or "\\" in path:
        raise MemoryRefused(f"the path {path!r} holds a character paths cannot hold")
    if path != PREFIX and not path.startswith(PREFIX + "/"):
        raise MemoryRefused(f"the path {path} is outside /memories: every path starts "
                            "with /memories/")
    parts = tuple(p for p in path[len(PREFIX):].split("/") if p)
    for part in parts:
        if part in (".", ".."):
            raise MemoryRefused(f"the path {path} uses '{part}': name the file from "
                                "/memories down")
        if part.startswith("."):
            raise MemoryRefused(f"the path {path} names a hidden file ('{part}'); names "
                                "starting with '.' are not used")
        if len(part.encode("utf-8", "surrogatepass")) > MAX_NAME:
            raise MemoryRefused(f"a name in {path} is longer than {MAX_NAME} bytes")
    if len(parts) > MAX_DEPTH:
        raise MemoryRefused(f"the path {path} is more than {MAX_DEPTH} folders deep")
    shown = PREFIX + "".join("/" + p for p in parts)
    return Location(parts, shown)


class Sandbox:
    """File operations confined to `root` (made, mode 0700, when first needed)."""

    def __init__(self, root: Path | str, limits: MemoryLimits = MemoryLimits()) -> None:
        self.root = Path(root)
        self.limits = limits

    # -- checking ------------------------------------------------------------------------

    def locate(self, path: object) -> Location:
        """Check a path in words and on disk (friendly messages); see the module doc."""
        where = parse(path)
        with self._dir((), create=False) as fd:
            if fd is None:
                return where
            current = os.dup(fd)
        try:
            for n, part in enumerate(where.parts):
                try:
                    st = os.stat(part, dir_fd=current, follow_symlinks=False)
                except FileNotFoundError:
                    return where
                last = n == len(where.parts) - 1
                _check_type(st, where.path, allow_file=last)
                if not stat.S_ISDIR(st.st_mode):
                    return where
                nxt = _open_dir(part, current)
                os.close(current)
                current = nxt
        except OSError as exc:
            raise _refusal(exc, where.path) from None
        finally:
            os.close(current)
        return where

    # -- descriptors ---------------------------------------------------------------------

    @contextmanager
    def _dir(self, parts: tuple[str, ...], create: bool) -> Iterator[int | None]:
        """A descriptor of the folder `parts` (None if it does not exist and not create),
        reached component by component without following any symlink."""
        if create:
            make_private_folders(self.root)
        try:
            fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
        except FileNotFoundError:
            if create:
                raise
            yield None
            return
        shown = PREFIX + "".join("/" + p for p in parts)
        try:
            for part in parts:
                try:
                    nxt = _open_dir(part, fd)
                except FileNotFoundError:
                    if not create:
                        os.close(fd)
                        fd = -1
                        break
                    make_private_folder(part, dir_fd=fd)
                    nxt = _open_dir(part, fd)
                os.close(fd)
                fd = nxt
        except OSError as exc:
            if fd >= 0:
                os.close(fd)
            raise _refusal(exc, shown) from None
        try:
            yield None if fd < 0 else fd
        finally:
            if fd >= 0:
                os.close(fd)

    def kind(self, where: Location) -> str | None:
        """'dir', 'file' or None (absent); anything else is refused."""
        if where.is_root:
            return "dir"
        with self._dir(where.parts[:-1], create=False) as fd:
            if fd is None:
                return None
            try:
                st = os.stat(where.parts[-1], dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                return None
            except OSError as exc:
                raise _refusal(exc, where.path) from None
        _check_type(st, where.path, allow_file=True)
        return "dir" if stat.S_ISDIR(st.st_mode) else "file"

    # -- reading -------------------------------------------------------------------------

    def read(self, where: Location) -> str | None:
        """The file's text, None if there is no such file."""
        if where.is_root:
            raise MemoryRefused(f"{where.path} is a directory")
        with self._dir(where.parts[:-1], create=False) as dfd:
            if dfd is None:
                return None
            return _read_at(dfd, where.parts[-1], where.path, self.limits.file_bytes)

    def walk(self, where: Location, depth: int | None = None) -> list[tuple[str, int, bool]]:
        """(relative path, size, is_dir) below a folder, names sorted, hidden names and
        anything neither file nor folder left out; `depth` levels (None: all)."""
        out: list[tuple[str, int, bool]] = []
        with self._dir(where.parts, create=False) as fd:
            if fd is not None:
                _walk_at(fd, "", 1, depth, out)
        return out

    def usage(self) -> tuple[int, int]:
        """(files, bytes) in the whole folder."""
        files = [size for _rel, size, is_dir in self.walk(Location((), PREFIX)) if not is_dir]
        return len(files), sum(files)

    # -- writing -------------------------------------------------------------------------

    def write(self, where: Location, text: str, *, new: bool) -> None:
        """Write a file's whole text: `new` refuses an existing name (O_EXCL); otherwise
        the text replaces the file through a rename."""
        data = text.encode("utf-8")
        name = where.parts[-1]
        with self._dir(where.parts[:-1], create=True) as dfd:
            assert dfd is not None
            if new:
                try:
                    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600,
                                 dir_fd=dfd)
                except FileExistsError:
                    raise MemoryRefused(f"File {where.path} already exists") from None
                except OSError as exc:
                    raise _refusal(exc, where.path) from None
                try:
                    _write_all(fd, data)
                except OSError as exc:
                    os.close(fd)
                    os.unlink(name, dir_fd=dfd)
                    raise _refusal(exc, where.path) from None
                os.close(fd)
                return
            try:
                replace_at(dfd, name, data)
            except OSError as exc:
                raise _refusal(exc, where.path) from None

    def unlink(self, where: Location) -> None:
        with self._dir(where.parts[:-1], create=False) as dfd:
            if dfd is None:
                raise MemoryRefused(f"The path {where.path} does not exist")
            try:
                st = os.stat(where.parts[-1], dir_fd=dfd, follow_symlinks=False)
                _check_type(st, where.path, allow_file=True)
                if stat.S_ISDIR(st.st_mode):
                    os.rmdir(where.parts[-1], dir_fd=dfd)
                else:
                    os.unlink(where.parts[-1], dir_fd=dfd)
            except FileNotFoundError:
                raise MemoryRefused(f"The path {where.path} does not exist") from None
            except OSError as exc:
                raise _refusal(exc, where.path) from None

    def mkdir(self, where: Location) -> None:
        with self._dir(where.parts, create=True):
            pass

    def rename(self, old: Location, new: Location) -> None:
        with self._dir(old.parts[:-1], create=False) as src, \
                self._dir(new.parts[:-1], create=True) as dst:
            if src is None:
                raise MemoryRefused(f"The path {old.path} does not exist")
            try:
                os.stat(new.parts[-1], dir_fd=dst, follow_symlinks=False)
            except FileNotFoundError:
                pass
            else:
                raise MemoryRefused(f"The destination {new.path} already exists")
            try:
                st = os.stat(old.parts[-1], dir_fd=src, follow_symlinks=False)
                _check_type(st, old.path, allow_file=True)
                os.rename(old.parts[-1], new.parts[-1], src_dir_fd=src, dst_dir_fd=dst)
            except FileNotFoundError:
                raise MemoryRefused(f"The path {old.path} does not exist") from None
            except OSError as exc:
                raise _refusal(exc, old.path) from None


def _open_dir(name: str, dir_fd: int) -> int:
    """Open a folder below `dir_fd`, never through a symlink. Linux answers ENOTDIR (not
    ELOOP) for a symlink opened with O_DIRECTORY | O_NOFOLLOW: say which it was."""
    import errno

    try:
        return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except NotADirectoryError:
        try:
            link = stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
        except OSError:
            link = False
        if link:
            raise OSError(errno.ELOOP, "a symlink") from None
        raise


def _check_type(st: os.stat_result, path: str, *, allow_file: bool) -> None:
    mode = st.st_mode
    if stat.S_ISLNK(mode):
        raise MemoryRefused(f"{path} goes through a symlink; symlinks are not followed")
    if stat.S_ISDIR(mode):
        return
    if stat.S_ISREG(mode):
        if not allow_file:
            raise MemoryRefused(f"{path}: a file stands where a directory is needed")
        return
    raise MemoryRefused(f"{path} is not a regular file (a device, fifo or socket); "
                        "only files and directories are used")


def _refusal(exc: OSError, path: str) -> MemoryRefused:
    import errno

    if exc.errno == errno.ELOOP:
        return MemoryRefused(f"{path} goes through a symlink; symlinks are not followed")
    if exc.errno == errno.ENOTDIR:
        return MemoryRefused(f"{path}: a file stands where a directory is needed")
    if exc.errno == errno.ENOSPC:
        return MemoryRefused(f"no space left on the device writing {path}")
    return MemoryRefused(f"{path}: {exc.strerror or exc}")


def _read_at(dfd: int, name: str, path: str, limit: int) -> str | None:
    try:
        fd = os.open(name, _READ_FLAGS, dir_fd=dfd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _refusal(exc, path) from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise MemoryRefused(f"{path} is a directory")
        _check_type(st, path, allow_file=True)
        if st.st_size > max(limit, 1) * 4:
            raise MemoryRefused(f"{path} is {st.st_size:,} bytes, over the size a memory file "
                                f"may have ({limit:,})")
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
    finally:
        os.close(fd)
    try:
        return b"".join(chunks).decode("utf-8")
    except UnicodeDecodeError:
        raise MemoryRefused(f"{path} is not UTF-8 text") from None


def replace_at(dfd: int, name: str, data: bytes, mode: int = 0o600, *,
               exact_mode: bool = False) -> None:
    """`data` as the file `name` of the folder `dfd`: written to a temporary file beside
    it, then renamed over the name (a rename replaces the directory entry, never writing
    through a link). `mode` is the new file's (less the umask; `exact_mode`: as given).
    OSError if it cannot be done, and no temporary file is left."""
    from secrets import token_hex  # on a write only: not at start-up

    temp = f".tmp-{os.getpid()}-{token_hex(6)}"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                 | getattr(os, "O_CLOEXEC", 0), mode, dir_fd=dfd)
    try:
        if exact_mode:
            os.fchmod(fd, mode)
        _write_all(fd, data)
        os.close(fd)
        fd = -1
        os.replace(temp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
    except OSError:
        if fd >= 0:
            os.close(fd)
        try:
            os.unlink(temp, dir_fd=dfd)
        except OSError:
            pass
        raise


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
    os.fsync(fd)


def _walk_at(fd: int, prefix: str, level: int, depth: int | None,
             out: list[tuple[str, int, bool]]) -> None:
    for name in sorted(os.listdir(fd)):
        if name.startswith("."):
            continue
        try:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except OSError:
            continue
        rel = f"{prefix}{name}"
        if stat.S_ISREG(st.st_mode):
            out.append((rel, st.st_size, False))
        elif stat.S_ISDIR(st.st_mode):
            out.append((rel, st.st_size, True))
            if depth is None or level < depth:
                try:
                    sub = _open_dir(name, fd)
                except OSError:
                    continue
                try:
                    _walk_at(sub, rel + "/", level + 1, depth, out)
                finally:
                    os.close(sub)
