"""The event log the program opens: the SQLite backend (see core/ports for the contract).
A thin re-export kept so that callers need not know which backend is in use."""

from __future__ import annotations

from ikigai_tui.core.events import WriteBatch
from ikigai_tui.core.ports import CommitHook, ConflictError, StoreError
from ikigai_tui.core.sqlite.store import Store

__all__ = ["Store", "StoreError", "ConflictError", "CommitHook", "WriteBatch"]
