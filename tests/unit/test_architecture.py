"""The core stays headless: importing it, at any depth, loads neither a UI library, a
provider library, a tokenizer nor a database driver; and the layers keep the import
contracts in pyproject.toml (import-linter): what each layer may import, no circles
within a package, and the ratchets' lists (today's exceptions) that only shrink."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import ikigai_tui.core

CORE_MODULES = sorted(
    m.name for m in pkgutil.walk_packages(ikigai_tui.core.__path__, "ikigai_tui.core.")
)
FORBIDDEN = ("textual", "litellm", "rich", "tiktoken")
DRIVERS = ("sqlite3", "aiosqlite", "psycopg", "asyncpg", "psycopg2")
PACKAGE = Path(ikigai_tui.core.__file__).parents[1]


def _loaded_after_import(statement: str, names: tuple[str, ...] = FORBIDDEN) -> set[str]:
    code = (
        f"import sys\n{statement}\n"
        f"print(','.join(m for m in {names!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return {m for m in out.stdout.strip().split(",") if m}


def test_core_modules_are_listed_at_every_depth():
    assert "ikigai_tui.core.replay.replayer" in CORE_MODULES
    assert "ikigai_tui.core.matching.local" in CORE_MODULES  # inside a subpackage
    assert len(CORE_MODULES) >= 70  # 80 before the SQLite adapter left for store/


def test_every_core_module_imports_without_ui_provider_tokenizer_or_driver():
    """Imported together (what one loads alone, all of them load together): none of them."""
    statement = "\n".join(f"import {m}" for m in CORE_MODULES)
    assert _loaded_after_import(statement, FORBIDDEN + DRIVERS) == set()


def test_the_store_adapter_is_where_the_driver_loads():
    """The driver check sees a driver: the SQLite adapter, outside the core, loads one."""
    assert "ikigai_tui.store.sqlite.store" not in CORE_MODULES
    assert _loaded_after_import("import ikigai_tui.store.sqlite.store", DRIVERS)


def test_cli_start_up_does_not_import_litellm():
    statement = "import ikigai_tui.cli, ikigai_tui.cli.run, ikigai_tui.cli.output, ikigai_tui.runtime"
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
    assert "5 kept, 0 broken" in out


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


def _contracts_with(tmp_path: Path, contract: str) -> Path:
    config = tmp_path / "contracts.ini"
    config.write_text("[importlinter]\nroot_package = ikigai_tui\ninclude_external_packages = True\n"
                      "exclude_type_checking_imports = False\n\n" + contract)
    return config


def test_the_circles_ratchet_sees_today_s_circles(tmp_path, capsys):
    """Without its list of today's exceptions the acyclic contract breaks: it does see
    the circles (the list is not decoration)."""
    code, out = _lint(_contracts_with(tmp_path, (
        "[importlinter:contract:acyclic]\nname = acyclic\ntype = acyclic_siblings\n"
        "ancestors =\n    ikigai_tui.core\n    ikigai_tui.tui\n")), capsys)
    assert code != 0
    assert "No cycles are allowed in ikigai_tui.core" in out


def test_a_stale_entry_of_a_ratchet_list_is_an_error(tmp_path, capsys):
    """An exception that no longer matches an import fails the run: the lists only shrink."""
    code, out = _lint(_contracts_with(tmp_path, (
        "[importlinter:contract:layers]\nname = layers\ntype = layers\n"
        "layers =\n    ikigai_tui.tui\n    ikigai_tui.core\n"
        "ignore_imports =\n    ikigai_tui.core.replay.replayer -> ikigai_tui.tui.app\n")), capsys)
    assert code != 0
    assert "ikigai_tui.core.replay.replayer -> ikigai_tui.tui.app" in out


def test_no_feature_of_the_core_imports_the_session_facade():
    """Features are handed what they use (protocols the session satisfies): inside the
    core, nothing imports core.session (type-checking imports counted)."""
    import grimp

    graph = grimp.build_graph("ikigai_tui", exclude_type_checking_imports=False)
    importers = graph.find_modules_that_directly_import("ikigai_tui.core.session")
    assert sorted(m for m in importers if m.startswith("ikigai_tui.core.")) == []
    assert "ikigai_tui.tui.app" in importers  # the check sees imports (it can fail)
