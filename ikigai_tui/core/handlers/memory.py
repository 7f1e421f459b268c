"""/memory: the memories folder, for the human (the LLM has the `memory` tool).

`/memory` lists the files with their sizes and the folder's use of its limits;
`/memory PATH` prints one file with line numbers. Read-only: the TUI shows the same in
a dialog.
"""

from __future__ import annotations

from ikigai_tui.core.commands.context import CommandContext
from ikigai_tui.core.errors import CommandError
from ikigai_tui.core.commands.parse import CommandResult
from ikigai_tui.core.memory.commands import view
from ikigai_tui.core.memory.sandbox import PREFIX, Location, MemoryRefused


def memory_service(c: CommandContext):
    from ikigai_tui.core.memory.service import MemoryService

    found = c.services.memory() if c.services.memory is not None else None
    if not isinstance(found, MemoryService):
        raise CommandError("the memory folder is not available here")
    return found


def listing(service) -> list[tuple[str, int]]:
    """(path, bytes) of every file, in path order."""
    box = service.box
    return [(f"{PREFIX}/{rel}", size) for rel, size, is_dir in box.walk(Location((), PREFIX))
            if not is_dir]


async def memory(c: CommandContext) -> CommandResult:
    path = c.args.take()
    c.args.done()
    service = memory_service(c)
    try:
        if path is not None:
            if not path.startswith("/"):
                path = f"{PREFIX}/{path}"
            return CommandResult(view(service.box, {"path": path}).split("\n"))
        files = listing(service)
    except MemoryRefused as exc:
        raise CommandError(str(exc)) from None
    limits = service.box.limits
    total = sum(size for _p, size in files)
    head = (f"Memory: {len(files)} file{'s' if len(files) != 1 else ''}, {total:,} bytes "
            f"(limits: {limits.files} files, {limits.total_bytes:,} bytes, "
            f"{limits.file_bytes:,} a file) in {service.settings.root}")
    if service.ask:
        head += "; the LLM's changes wait for your approval"
    rows = [f"  {size:>9,}  {path}" for path, size in files]
    return CommandResult([head, *rows] if files else [head, "  (no memories yet)"], data=files)
