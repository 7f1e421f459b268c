"""The core stays headless: importing it loads neither textual nor litellm; and the
layers keep the import contracts in pyproject.toml (import-linter)."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

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


# -- import contracts (import-linter; the contracts are in pyproject.toml) ----------------


REPO = Path(__file__).resolve().parents[2]


def _lint(config: Path, capsys) -> tuple[int, str]:
    from importlinter.cli import lint_imports

    code = lint_imports(config_filename=str(config), no_cache=True, no_logo=True)
    return code, capsys.readouterr().out


def test_the_layers_keep_their_import_contracts(capsys):
    code, out = _lint(REPO / "pyproject.toml", capsys)
    assert code == 0, out
    assert "3 kept, 0 broken" in out


def test_a_broken_contract_is_reported(tmp_path, capsys):
    """The linter really reads our package: the UI does depend on the core."""
    config = tmp_path / "contracts.ini"
    config.write_text(
        "[importlinter]\nroot_package = ikigai_tui\n\n"
        "[importlinter:contract:ui-without-core]\nname = UI without core\ntype = forbidden\n"
        "source_modules = ikigai_tui.tui\nforbidden_modules = ikigai_tui.core\n")
    code, out = _lint(config, capsys)
    assert code != 0
    assert "ikigai_tui.tui is not allowed to import ikigai_tui.core" in out
