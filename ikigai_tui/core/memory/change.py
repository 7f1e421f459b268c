"""One change to the memories folder: planned (nothing written), shown as a diff, made,
recorded as a `memory` event, and reversed by /undo from that event alone.

A change carries what reversing it needs: the text before (None for a new file) and the
SHA-256 of the text after, so an /undo restores exactly the file as it was, and refuses
when the file changed since (another change, or a hand edit). A deleted folder keeps
every file's text.
"""

from __future__ import annotations

import difflib
import hashlib
from dataclasses import dataclass, field
from typing import Any

from ikigai_tui.core.memory.sandbox import PREFIX, Location, MemoryRefused, Sandbox, parse

WRITES = ("create", "str_replace", "insert", "delete", "rename")
DIFF_LINES = 400  # of a shown diff; the rest is counted


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Change:
    command: str  # one of WRITES
    where: Location
    before: str | None  # the file's text before (None: there was no file)
    after: str | None  # the file's text after (None: no file after)
    result: str  # what the tool answers once it is made
    new_where: Location | None = None  # rename's destination
    kind: str = "file"  # what the path names: file or dir
    # A deleted folder: its files' texts and its folders (paths relative to it)
    files: dict[str, str] = field(default_factory=dict)
    dirs: tuple[str, ...] = ()
    made_dirs: tuple[str, ...] = ()  # folders it creates on the way (an undo removes them)

    @property
    def path(self) -> str:
        return self.where.path

    def summary(self) -> str:
        if self.command == "rename":
            return f"rename {self.path} -> {self.new_where.path}"  # type: ignore[union-attr]
        if self.kind == "dir":
            return f"delete {self.path}/ ({_plural(len(self.files), 'file')})"
        size = len((self.after if self.after is not None else self.before or "").encode("utf-8"))
        return f"{self.command} {self.path} ({size:,} bytes)"

    def diff(self) -> list[str]:
        """The change as a unified diff (a rename as one line)."""
        if self.command == "rename":
            return [f"rename {self.path} -> {self.new_where.path}"]  # type: ignore[union-attr]
        if self.kind == "dir":
            lines = [f"delete the folder {self.path} and everything in it:"]
            lines += [f"  {self.path}/{rel}" for rel in sorted(self.files)]
            return lines
        old = (self.before or "").splitlines()
        new = (self.after or "").splitlines()
        lines = list(difflib.unified_diff(
            old, new, "/dev/null" if self.before is None else self.path,
            "/dev/null" if self.after is None else self.path, lineterm="", n=2))
        if len(lines) > DIFF_LINES:
            lines = lines[:DIFF_LINES] + [f"... and {len(lines) - DIFF_LINES:,} more lines"]
        return lines

    # -- making it ---------------------------------------------------------------------

    def make(self, box: Sandbox) -> None:
        """Write it, if the folder is still as it was planned against (else refused)."""
        if self.command == "rename":
            assert self.new_where is not None
            _check_now(box, self.where, self.kind, self.before)
            box.rename(self.where, self.new_where)
            return
        if self.kind == "dir":
            if snapshot(box, self.where) != (self.files, self.dirs):
                raise MemoryRefused(f"{self.path} changed since this change was planned; "
                                    "nothing was deleted")
            _remove_tree(box, self.where, self.files, self.dirs)
            return
        _check_now(box, self.where, "file" if self.before is not None else None, self.before)
        if self.after is None:
            box.unlink(self.where)
        else:
            box.write(self.where, self.after, new=self.before is None)

    def undo_make(self, box: Sandbox) -> None:
        """Take back a change just made (its record could not be written)."""
        reverse(box, self.payload())

    def payload(self) -> dict[str, Any]:
        """The `memory` event: the command, its path(s), and what reversing it needs."""
        out: dict[str, Any] = {"command": self.command, "path": self.path, "kind": self.kind}
        if self.made_dirs:
            out["made_dirs"] = list(self.made_dirs)
        if self.new_where is not None:
            out["new_path"] = self.new_where.path
            return out
        if self.kind == "dir":
            out["files"] = dict(self.files)
            out["dirs"] = list(self.dirs)
            return out
        out["before"] = self.before
        out["after_sha256"] = None if self.after is None else sha(self.after)
        out["after_bytes"] = None if self.after is None else len(self.after.encode("utf-8"))
        return out


def _check_now(box: Sandbox, where: Location, kind: str | None, text: str | None) -> None:
    now_kind = box.kind(box.locate(where.path))
    if now_kind != kind or (kind == "file" and text is not None and box.read(where) != text):
        raise MemoryRefused(f"{where.path} changed since this change was planned; nothing "
                            "was written")


def snapshot(box: Sandbox, where: Location) -> tuple[dict[str, str], tuple[str, ...]]:
    """A directory's files (path below it -> text) and folders, as they are now."""
    files: dict[str, str] = {}
    dirs: list[str] = []
    for rel, _size, is_dir in box.walk(where):
        if is_dir:
            dirs.append(rel)
        else:
            files[rel] = box.read(Location(where.parts + tuple(rel.split("/")), f"{where.path}/{rel}")) or ""
    return files, tuple(dirs)


def _remove_tree(box: Sandbox, where: Location, files: dict[str, str], dirs: tuple[str, ...]) -> None:
    for rel in files:
        box.unlink(_below(where, rel))
    for rel in sorted(dirs, key=lambda d: -d.count("/")):
        box.unlink(_below(where, rel))
    box.unlink(where)


def _below(where: Location, rel: str) -> Location:
    return Location(where.parts + tuple(rel.split("/")), f"{where.path}/{rel}")


# -- reversing a recorded change ---------------------------------------------------------


def reverse(box: Sandbox, payload: dict[str, Any]) -> str:
    """Put the folder back as it was before the recorded change; refused (nothing
    written) when what the change left has changed since. Returns what was done."""
    done = _reverse(box, payload)
    for path in sorted(payload.get("made_dirs") or [], key=lambda p: -p.count("/")):
        try:  # the folders it made on the way, if nothing else went in them since
            where = box.locate(path)
            if box.kind(where) == "dir" and not box.walk(where, depth=1):
                box.unlink(where)
        except MemoryRefused:
            pass
    return done


def missing_dirs(box: Sandbox, where: Location) -> tuple[str, ...]:
    """The folders above `where` that do not exist yet (writing it would make them)."""
    out = []
    for n in range(1, len(where.parts)):
        above = Location(where.parts[:n], PREFIX + "".join("/" + p for p in where.parts[:n]))
        if box.kind(above) is None:
            out.append(above.path)
    return tuple(out)


def _reverse(box: Sandbox, payload: dict[str, Any]) -> str:
    command = payload.get("command")
    where = box.locate(payload.get("path"))
    changed = (f"{where.path} changed since that memory change; nothing was restored "
               "(view it, and change it back by hand if you wish)")
    if command == "rename":
        new = box.locate(payload.get("new_path"))
        if box.kind(new) != payload.get("kind", "file") or box.kind(where) is not None:
            raise MemoryRefused(f"{new.path} changed since that rename; nothing was moved back")
        box.rename(new, where)
        return f"{new.path} is back at {where.path}"
    if payload.get("kind") == "dir":
        if box.kind(where) is not None:
            raise MemoryRefused(f"{where.path} exists again; nothing was restored")
        files, dirs = payload.get("files") or {}, payload.get("dirs") or []
        _check_room(box, sum(len(t.encode("utf-8")) for t in files.values()), len(files))
        box.mkdir(where)
        for rel in sorted(dirs, key=lambda d: d.count("/")):
            box.mkdir(_below(where, rel))
        for rel, text in files.items():
            box.write(_below(where, rel), text, new=True)
        return f"the folder {where.path} is back ({_plural(len(files), 'file')})"
    before, after_sha = payload.get("before"), payload.get("after_sha256")
    now = box.read(where) if box.kind(where) == "file" else None
    if box.kind(where) == "dir":
        raise MemoryRefused(changed)
    if after_sha is None:  # a delete: the file must still be absent
        if now is not None:
            raise MemoryRefused(f"{where.path} exists again; nothing was restored")
    elif now is None or sha(now) != after_sha:
        raise MemoryRefused(changed)
    if before is None:
        box.unlink(where)
        return f"{where.path} is removed again"
    grow = len(before.encode("utf-8")) - (len(now.encode("utf-8")) if now is not None else 0)
    _check_room(box, grow, 1 if now is None else 0)
    box.write(where, before, new=now is None)
    return f"{where.path} is back as it was"


def _check_room(box: Sandbox, grow: int, new_files: int) -> None:
    files, total = box.usage()
    limits = box.limits
    if new_files and files + new_files > limits.files:
        raise MemoryRefused(f"the memories folder would hold {files + new_files} files, over "
                            f"its limit of {limits.files}; nothing was written")
    if grow > 0 and total + grow > limits.total_bytes:
        raise MemoryRefused(f"the memories folder would hold {total + grow:,} bytes, over its "
                            f"limit of {limits.total_bytes:,} bytes; nothing was written")


def check_file_size(path: str, text: str, limit: int) -> None:
    size = len(text.encode("utf-8"))
    if size > limit:
        raise MemoryRefused(f"{path} would be {size:,} bytes, over the limit of {limit:,} "
                            "bytes a memory file may have; nothing was written")


def words(payload: dict[str, Any]) -> str:
    """A recorded change in words, for `log`."""
    command, path = payload.get("command", "?"), payload.get("path", "?")
    if command == "rename":
        return f"memory rename {path} -> {payload.get('new_path', '?')}"
    if payload.get("kind") == "dir":
        return f"memory delete {path}/ ({_plural(len(payload.get('files') or {}), 'file')})"
    size = payload.get("after_bytes")
    return f"memory {command} {path}" + (f" ({size:,} bytes)" if isinstance(size, int) else "")


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


__all__ = ["PREFIX", "WRITES", "Change", "check_file_size", "missing_dirs", "parse", "reverse",
           "sha", "words", "_check_room"]
