"""An agent's workspace, confined: every path a file tool names stays inside it.

Paths are relative to the workspace (`src/app.py`); an absolute path is accepted only
when it lies inside the workspace. `..` is refused in words, before the disk is looked
at. On disk the approach is the memory sandbox's (core/memory/sandbox.py), with its
helpers: resolve-and-verify over directory descriptors. Every open starts from the
workspace's own descriptor and goes one component at a time with O_NOFOLLOW
(`os.open(name, ..., dir_fd=parent)`), so no open ever follows a symlink. A symlink met
on the way (or swapped in between a check and the open: the O_NOFOLLOW open then fails,
and is looked at again) is read with readlink and resolved in words against the
components walked so far; a target that leaves the workspace is refused, one inside it
is walked the same way, from the workspace's descriptor (at most 40 links). A file is
used only once fstat says it is a regular file. Writes go to a temporary file in the
same folder that is renamed over the name (a rename replaces a directory entry and
never writes through a link).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ikigai_tui.core.memory.sandbox import _open_dir as open_dir_nofollow
from ikigai_tui.core.memory.sandbox import replace_at

MAX_LINKS = 40  # symlinks followed in one path, as Linux's own limit
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC


class Refused(Exception):
    """A path or file the tools will not use: the message says why; nothing changed."""


class Missing(Refused):
    """The file, or a folder on its way, does not exist."""


class Workspace:
    """File operations confined to `root` (which must exist)."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)

    # -- words -----------------------------------------------------------------------

    def parts(self, path: object) -> tuple[str, ...]:
        """The components of a path below the workspace (checked in words only)."""
        if not isinstance(path, str):
            raise Refused("a path is needed (a string, relative to the workspace)")
        if "\x00" in path:
            raise Refused(f"the path {path!r} holds a NUL character")
        text = path.strip()
        if text.startswith("/"):
            text = self._inside(text)
        parts = tuple(p for p in text.split("/") if p not in ("", "."))
        if ".." in parts:
            raise Refused(f"the path {path} uses '..': name files from the workspace down "
                          f"(the workspace is {self.root})")
        return parts

    def _inside(self, absolute: str) -> str:
        """An absolute path as a relative one, if it lies inside the workspace."""
        for root in {os.path.normpath(self.root), os.path.realpath(self.root)}:
            given = os.path.normpath(absolute)
            if given == root:
                return ""
            if given.startswith(root.rstrip("/") + "/"):
                return given[len(root.rstrip("/")) + 1:]
        raise Refused(f"the path {absolute} is outside the workspace ({self.root}); give a "
                      "path relative to it")

    @staticmethod
    def shown(parts: tuple[str, ...]) -> str:
        return "/".join(parts) or "."

    # -- descriptors -----------------------------------------------------------------

    def _root_fd(self) -> int:
        try:
            return os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | _CLOEXEC)
        except OSError as exc:
            raise Refused(f"the workspace {self.root} cannot be opened: "
                          f"{exc.strerror or exc}") from None

    def _follow(self, done: tuple[str, ...], name: str, fd: int, hops: int,
                path: str) -> tuple[str, ...]:
        """The components a symlink `name` (in the folder `done`) stands for, verified in
        words to stay inside the workspace."""
        if hops >= MAX_LINKS:
            raise Refused(f"{path}: too many symlinks on the way")
        try:
            target = os.readlink(name, dir_fd=fd)
        except OSError as exc:
            raise Refused(f"{path}: {exc.strerror or exc}") from None
        if target.startswith("/"):
            try:
                rel = self._inside(target)
            except Refused:
                raise Refused(f"{path} goes through a symlink that leads out of the "
                              f"workspace (to {target}); refused") from None
            base: list[str] = []
            words = rel.split("/")
        else:
            base, words = list(done), target.split("/")
        for word in words:
            if word in ("", "."):
                continue
            if word == "..":
                if not base:
                    raise Refused(f"{path} goes through a symlink that leads out of the "
                                  f"workspace (to {target}); refused")
                base.pop()
            else:
                base.append(word)
        return tuple(base)

    def _walk(self, parts: tuple[str, ...], path: str, make: bool,
              hops: int = 0) -> tuple[int, tuple[str, ...]]:
        """A descriptor of the folder `parts` and its resolved components: the folders
        opened one at a time from the workspace's descriptor, never through a link (a
        link is resolved in words and the walk starts again); `make`: missing folders are
        made, as mkdir -p does."""
        while True:
            fd = self._root_fd()
            done: tuple[str, ...] = ()
            restart = None
            try:
                for i, part in enumerate(parts):
                    try:
                        nxt = open_dir_nofollow(part, fd)
                    except FileNotFoundError:
                        if not make:
                            raise Missing(f"{path}: the folder {self.shown(done + (part,))} "
                                          "does not exist") from None
                        try:
                            os.mkdir(part, 0o777, dir_fd=fd)
                        except FileExistsError:
                            pass
                        except OSError as exc:
                            raise Refused(f"{path}: {exc.strerror or exc}") from None
                        nxt = open_dir_nofollow(part, fd)
                    except OSError as exc:
                        if exc.errno == errno.ELOOP:  # a link (maybe swapped in just now)
                            restart = self._follow(done, part, fd, hops, path) + parts[i + 1:]
                            break
                        if exc.errno == errno.ENOTDIR:
                            raise Refused(f"{path}: {self.shown(done + (part,))} is not a "
                                          "folder") from None
                        raise Refused(f"{path}: {exc.strerror or exc}") from None
                    os.close(fd)
                    fd = nxt
                    done += (part,)
                else:
                    return fd, done
            except BaseException:
                os.close(fd)
                raise
            os.close(fd)
            hops += 1
            parts = restart

    def _entry(self, parts: tuple[str, ...], path: str, make: bool = False
               ) -> tuple[int, str, tuple[str, ...]]:
        """(descriptor of the folder holding the last component, its name, the resolved
        components), a link in the last place resolved too."""
        if not parts:
            raise Refused("a file path is needed, not the workspace itself")
        for hops in range(MAX_LINKS):
            fd, folder = self._walk(parts[:-1], path, make, hops)
            name = parts[-1]
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                return fd, name, folder + (name,)
            except OSError as exc:
                os.close(fd)
                raise Refused(f"{path}: {exc.strerror or exc}") from None
            if not stat.S_ISLNK(st.st_mode):
                return fd, name, folder + (name,)
            try:
                parts = self._follow(folder, name, fd, hops, path)
            finally:
                os.close(fd)
            if not parts:
                raise Refused(f"{path} is a link to the workspace itself, not a file")
        raise Refused(f"{path}: too many symlinks on the way")

    @contextmanager
    def folder(self, parts: tuple[str, ...], path: str) -> Iterator[tuple[int, tuple[str, ...]]]:
        """A descriptor of the folder `parts` (and its resolved components)."""
        fd, resolved = self._walk(parts, path, make=False)
        try:
            yield fd, resolved
        finally:
            os.close(fd)

    def open_file(self, path: object) -> tuple[int, os.stat_result, str]:
        """An open descriptor of a regular file, its fstat, and its path as shown."""
        parts = self.parts(path)
        shown = self.shown(parts)
        for _ in range(MAX_LINKS):
            fd, name, resolved = self._entry(parts, shown)
            try:
                ffd = os.open(name, _READ_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                raise Missing(f"{shown} does not exist") from None
            except OSError as exc:
                if exc.errno == errno.ELOOP:  # a symlink swapped in: resolve it again
                    continue
                raise Refused(f"{shown}: {exc.strerror or exc}") from None
            finally:
                os.close(fd)
            st = os.fstat(ffd)
            if not stat.S_ISREG(st.st_mode):
                os.close(ffd)
                what = "a folder" if stat.S_ISDIR(st.st_mode) else "not a regular file"
                raise Refused(f"{shown} is {what}")
            os.set_blocking(ffd, True)
            return ffd, st, shown
        raise Refused(f"{shown}: too many symlinks on the way")

    def read_bytes(self, path: object, limit: int) -> tuple[bytes, str]:
        """A file's bytes (refused over `limit`) and its path as shown."""
        fd, st, shown = self.open_file(path)
        try:
            if st.st_size > limit:
                raise Refused(f"{shown} is {st.st_size:,} bytes, over the {limit:,} bytes the "
                              "file tools read")
            return read_all(fd), shown
        finally:
            os.close(fd)

    def write(self, path: object, data: bytes) -> tuple[str, bool]:
        """Write a file's whole content, making its folders; (path as shown, created)."""
        parts = self.parts(path)
        shown = self.shown(parts)
        fd, name, _resolved = self._entry(parts, shown, make=True)
        try:
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                st = None
            if st is not None and not stat.S_ISREG(st.st_mode):
                raise Refused(f"{shown} is not a regular file")
            _replace(fd, name, data, None if st is None else stat.S_IMODE(st.st_mode), shown)
            return shown, st is None
        finally:
            os.close(fd)


def read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def _replace(dfd: int, name: str, data: bytes, mode: int | None, shown: str) -> None:
    """The file replaced through a rename (the memory sandbox's replace_at); an existing
    file keeps its mode, a new one gets 0o666 less the umask."""
    try:
        replace_at(dfd, name, data, 0o666 if mode is None else mode, exact_mode=mode is not None)
    except OSError as exc:
        raise Refused(f"{shown}: {exc.strerror or exc}") from None
