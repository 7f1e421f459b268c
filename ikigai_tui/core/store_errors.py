"""Kept importable: the store's errors live in core/ports (SQLite's translation: core/sqlite/errors)."""

from __future__ import annotations

from ikigai_tui.core.ports import ConflictError, StoreError

__all__ = ["StoreError", "ConflictError"]
