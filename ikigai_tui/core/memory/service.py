"""A session's memory: the folder, its limits, and how writes are reviewed.

`memory_writes = "auto"` writes what the LLM asks (each change recorded and undoable);
`"ask"` hands each proposed change to the reviewer the front end installed (the TUI's
diff dialog; headless `run --yes` accepts); with none installed, writes are refused.
Kept on the session object itself (like its context service), so the core's Session
needs no field for it; `runtime` attaches the configured one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import platformdirs

from ikigai_tui.core.memory.sandbox import MemoryLimits, Sandbox

if TYPE_CHECKING:
    from ikigai_tui.core.commands.proposals import Reviewer

WRITE_MODES = ("auto", "ask")
ASK_REFUSAL = ("memory writes wait for the user's approval (memory_writes = \"ask\") and "
               "nobody is here to give it: run with --yes to allow them; nothing was written")


def default_root() -> Path:
    return Path(platformdirs.user_data_dir("ikigai")) / "memories"


@dataclass(frozen=True)
class MemorySettings:
    root: Path = field(default_factory=default_root)
    limits: MemoryLimits = MemoryLimits()
    writes: str = "auto"  # auto | ask


class MemoryService:
    def __init__(self, settings: MemorySettings) -> None:
        self.settings = settings
        self.box = Sandbox(settings.root, settings.limits)
        # Answers each proposed write when writes are "ask" (None: refused).
        self.reviewer: Reviewer | None = None

    @property
    def ask(self) -> bool:
        return self.settings.writes == "ask"


def memory_of(session: Any) -> MemoryService:
    """The session's memory (Session.memory: the default folder and limits until the
    configured ones are attached)."""
    service: MemoryService = session.memory
    return service


def attach_memory(session: Any, settings: MemorySettings) -> MemoryService:
    """The session's memory from now on: `settings`' folder, limits and write rule."""
    session.memory = service = MemoryService(settings)
    return service
