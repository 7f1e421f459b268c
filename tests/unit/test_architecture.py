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
    assert "7 kept, 0 broken" in out


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


def test_the_circles_contract_sees_a_circle(tmp_path, capsys, monkeypatch):
    """The acyclic contract does see circles (the core has none left to show it): two
    modules of a package that import each other, one of them under TYPE_CHECKING."""
    package = tmp_path / "circled"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from circled import b\n")
    (package / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                  "    from circled import a\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    config = tmp_path / "contracts.ini"
    config.write_text("[importlinter]\nroot_package = circled\n"
                      "exclude_type_checking_imports = False\n\n"
                      "[importlinter:contract:acyclic]\nname = acyclic\ntype = acyclic_siblings\n"
                      "ancestors =\n    circled\n")
    code, out = _lint(config, capsys)
    assert code != 0
    assert "No cycles are allowed in circled" in out


def test_the_layers_contract_sees_a_layer_imported_upwards(tmp_path, capsys):
    """Reversed, the layers break: the front end does import the core."""
    code, out = _lint(_contracts_with(tmp_path, (
        "[importlinter:contract:layers]\nname = layers\ntype = layers\n"
        "layers =\n    ikigai_tui.core\n    ikigai_tui.tui\n")), capsys)
    assert code != 0
    assert "ikigai_tui.tui is not allowed to import ikigai_tui.core" in out


def _modules_in(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob("*.py") if p.name != "__init__.py")


def test_the_package_root_and_the_core_root_stay_small():
    """Packages show the layers (issue 24): at most 6 modules directly in ikigai_tui/ (the
    rest are packages) and at most 20 directly in core/."""
    assert len(_modules_in(PACKAGE)) <= 6, _modules_in(PACKAGE)
    assert len(_modules_in(PACKAGE / "core")) <= 20, _modules_in(PACKAGE / "core")
    assert "session.py" in _modules_in(PACKAGE / "core")  # the check reads the real folder


def test_no_feature_of_the_core_imports_the_session_facade():
    """Features are handed what they use (protocols the session satisfies): inside the
    core, nothing imports core.session (type-checking imports counted)."""
    import grimp

    graph = grimp.build_graph("ikigai_tui", exclude_type_checking_imports=False)
    importers = graph.find_modules_that_directly_import("ikigai_tui.core.session")
    assert sorted(m for m in importers if m.startswith("ikigai_tui.core.")) == []
    assert "ikigai_tui.tui.app" in importers  # the check sees imports (it can fail)
