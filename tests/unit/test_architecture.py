"""The core stays headless: importing it loads neither textual nor litellm."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import ikigai_tui.core

CORE_MODULES = sorted(
    f"ikigai_tui.core.{m.name}" for m in pkgutil.iter_modules(ikigai_tui.core.__path__)
)
FORBIDDEN = ("textual", "litellm", "rich", "tiktoken")


def _loaded_after_import(statement: str) -> set[str]:
    code = (
        f"import sys\n{statement}\n"
        f"print(','.join(m for m in {FORBIDDEN!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return {m for m in out.stdout.strip().split(",") if m}


def test_core_modules_are_listed():
    assert "ikigai_tui.core.replay" in CORE_MODULES and len(CORE_MODULES) >= 10


def test_every_core_module_imports_without_ui_or_provider_libraries():
    statement = "\n".join(f"import {m}" for m in CORE_MODULES)
    assert _loaded_after_import(statement) == set()


def test_cli_start_up_does_not_import_litellm():
    statement = "import ikigai_tui.cli, ikigai_tui.cli_run, ikigai_tui.cli_output, ikigai_tui.runtime"
    assert "litellm" not in _loaded_after_import(statement)


def test_the_check_itself_can_fail():
    assert "textual" in _loaded_after_import("import textual")
