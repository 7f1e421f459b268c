"""The memory tool's commands (Anthropic's memory-tool set): `view` answers at once;
the writes (`create`, `str_replace`, `insert`, `delete`, `rename`) are planned into a
`Change` first, checked against the limits, and written only once accepted.

The answers follow Anthropic's texts, so a model trained on that tool reads them as it
expects ("File created successfully at: ...", "Here's the content of ... with line
numbers:", ...).
"""

from __future__ import annotations

from typing import Any

from ikigai_tui.core.memory.change import (Change, _check_room, check_file_size, missing_dirs,
                                            snapshot)
from ikigai_tui.core.memory.sandbox import PREFIX, Location, MemoryRefused, Sandbox

NUMBER_WIDTH = 6
MAX_VIEW_LINES = 999_999


def _size(n: int) -> str:
    if n < 1024:
        return f"{n}B"
    for unit, scale in (("K", 1024), ("M", 1024 ** 2), ("G", 1024 ** 3)):
        if n < scale * 1024 or unit == "G":
            value = n / scale
            return f"{value:.0f}{unit}" if value == int(value) else f"{value:.1f}{unit}"
    return f"{n}B"  # pragma: no cover


def numbered(text: str, start: int = 1) -> list[str]:
    return [f"{n:>{NUMBER_WIDTH}}\t{line}" for n, line in enumerate(text.split("\n"), start)]


def view(box: Sandbox, args: dict[str, Any]) -> str:
    where = box.locate(args.get("path"))
    kind = box.kind(where)
    if kind is None:
        if where.is_root:  # an empty memory: the folder is made when first written
            return (f"Here're the files and directories up to 2 levels deep in {PREFIX}, "
                    f"excluding hidden items:\n0B\t{PREFIX}")
        raise MemoryRefused(f"The path {where.path} does not exist. Please provide a valid path.")
    if kind == "dir":
        lines = [f"Here're the files and directories up to 2 levels deep in {where.path}, "
                 "excluding hidden items:"]
        total = 0
        rows = []
        for rel, size, is_dir in box.walk(where, depth=2):
            if not is_dir:
                total += size
            rows.append(f"{_size(size)}\t{where.path}/{rel}{'/' if is_dir else ''}")
        lines.append(f"{_size(total)}\t{where.path}")
        return "\n".join(lines + rows)
    text = box.read(where) or ""
    lines = text.split("\n")
    if len(lines) > MAX_VIEW_LINES:
        raise MemoryRefused(f"File {where.path} exceeds maximum line limit of 999,999 lines.")
    start, end = _view_range(args.get("view_range"), len(lines))
    shown = "\n".join(lines[start - 1:end])
    return f"Here's the content of {where.path} with line numbers:\n" + "\n".join(numbered(shown, start))


def _view_range(value: Any, count: int) -> tuple[int, int]:
    if value is None:
        return 1, count
    if (not isinstance(value, list) or len(value) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
        raise MemoryRefused("view_range must be two line numbers [start, end] (end -1: to the end)")
    start, end = value
    end = count if end == -1 else end
    if start < 1 or start > count:
        raise MemoryRefused(f"Invalid view_range {value}: the first line must be within 1 and "
                            f"{count} (the file has {count} lines)")
    if end < start:
        raise MemoryRefused(f"Invalid view_range {value}: the end comes before the start")
    return start, min(end, count)


def _text(args: dict[str, Any], name: str) -> str:
    value = args.get(name)
    if not isinstance(value, str):
        raise MemoryRefused(f"'{name}' must be a string")
    return value


def plan(box: Sandbox, args: dict[str, Any]) -> Change:
    """What a write command would change, checked (limits, state); nothing is written."""
    command = args.get("command")
    if command == "rename":
        return _rename(box, args)
    where = box.locate(args.get("path"))
    if command == "create":
        return _create(box, where, _text(args, "file_text"))
    if command == "delete":
        return _delete(box, where)
    before = _existing_file(box, where)
    if command == "str_replace":
        return _str_replace(box, where, before, _text(args, "old_str"), _text(args, "new_str"))
    if command == "insert":
        line = args.get("insert_line")
        if not isinstance(line, int) or isinstance(line, bool):
            raise MemoryRefused("'insert_line' must be a whole number")
        return _insert(box, where, before, line, _text(args, "insert_text"))
    raise MemoryRefused(f"unknown command {command!r}: use view, create, str_replace, insert, "
                        "delete or rename")


def _existing_file(box: Sandbox, where: Location) -> str:
    kind = box.kind(where)
    if kind is None:
        raise MemoryRefused(f"The path {where.path} does not exist. Please provide a valid path.")
    if kind == "dir":
        raise MemoryRefused(f"The path {where.path} is not a file.")
    return box.read(where) or ""


def _grown(box: Sandbox, where: Location, before: str, after: str) -> None:
    limits = box.limits
    check_file_size(where.path, after, limits.file_bytes)
    _check_room(box, len(after.encode("utf-8")) - len(before.encode("utf-8")), 0)


def _create(box: Sandbox, where: Location, text: str) -> Change:
    if where.is_root:
        raise MemoryRefused(f"{PREFIX} is the folder itself: name a file in it")
    kind = box.kind(where)
    if kind is not None:
        raise MemoryRefused(f"File {where.path} already exists" if kind == "file" else
                            f"{where.path} is a directory")
    check_file_size(where.path, text, box.limits.file_bytes)
    _check_room(box, len(text.encode("utf-8")), 1)
    return Change("create", where, None, text, f"File created successfully at: {where.path}",
                  made_dirs=missing_dirs(box, where))


def _str_replace(box: Sandbox, where: Location, before: str, old: str, new: str) -> Change:
    if not old:
        raise MemoryRefused("'old_str' must not be empty")
    count = before.count(old)
    if count == 0:
        raise MemoryRefused(f"No replacement was performed, old_str `{old}` did not appear "
                            f"verbatim in {where.path}.")
    if count > 1:
        lines, start = [], 0
        while (pos := before.find(old, start)) != -1:
            lines.append(str(before.count("\n", 0, pos) + 1))
            start = pos + 1
        raise MemoryRefused(f"No replacement was performed. Multiple occurrences of old_str "
                            f"`{old}` in lines: {', '.join(lines)}. Please ensure it is unique")
    pos = before.find(old)
    after = before[:pos] + new + before[pos + len(old):]
    _grown(box, where, before, after)
    at = before.count("\n", 0, pos)
    new_lines = after.split("\n")
    first, last = max(0, at - 2), min(len(new_lines), at + 3 + new.count("\n"))
    snippet = "\n".join(numbered("\n".join(new_lines[first:last]), first + 1))
    return Change("str_replace", where, before, after,
                  "The memory file has been edited. Here is the snippet showing the change "
                  f"(with line numbers):\n{snippet}")


def _insert(box: Sandbox, where: Location, before: str, line: int, text: str) -> Change:
    lines = before.splitlines()
    if line < 0 or line > len(lines):
        raise MemoryRefused(f"Invalid `insert_line` parameter: {line}. It should be within the "
                            f"range [0, {len(lines)}].")
    lines.insert(line, text.rstrip("\n"))
    after = "\n".join(lines) + "\n"
    _grown(box, where, before, after)
    return Change("insert", where, before, after, f"The file {where.path} has been edited.")


def _delete(box: Sandbox, where: Location) -> Change:
    if where.is_root:
        raise MemoryRefused(f"Cannot delete the {PREFIX} directory itself")
    kind = box.kind(where)
    if kind is None:
        raise MemoryRefused(f"The path {where.path} does not exist")
    done = f"Successfully deleted {where.path}"
    if kind == "file":
        return Change("delete", where, box.read(where) or "", None, done)
    files, dirs = snapshot(box, where)
    return Change("delete", where, None, None, done, kind="dir", files=files, dirs=dirs)


def _rename(box: Sandbox, args: dict[str, Any]) -> Change:
    old, new = box.locate(args.get("old_path")), box.locate(args.get("new_path"))
    if old.is_root or new.is_root:
        raise MemoryRefused(f"{PREFIX} itself cannot be renamed, nor replaced")
    kind = box.kind(old)
    if kind is None:
        raise MemoryRefused(f"The path {old.path} does not exist")
    if box.kind(new) is not None:
        raise MemoryRefused(f"The destination {new.path} already exists")
    if new.parts[:len(old.parts)] == old.parts:
        raise MemoryRefused(f"{old.path} cannot move inside itself")
    return Change("rename", old, None, None, f"Successfully renamed {old.path} to {new.path}",
                  new_where=new, kind=kind, made_dirs=missing_dirs(box, new))
