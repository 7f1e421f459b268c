"""Every snapshot SVG belongs to a test. syrupy fails a one-process run that leaves a
snapshot unused, but under pytest-xdist (`make test`) it skips that check (syrupy 4.8:
the workers' reports are not merged), so a renamed or deleted test would leave its
snapshot behind unnoticed: this test keeps the check in the parallel run."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from .conftest import SNAPSHOT_DIR

TESTS = Path(__file__).resolve().parent


def _test_names(module: Path) -> set[str]:
    tree = ast.parse(module.read_text(encoding="utf-8"))
    return {node.name for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.name.startswith("test_")}


def unused_snapshots(snapshot_dir: Path, tests: Path) -> list[str]:
    unused = []
    for svg in sorted(snapshot_dir.glob("*/*.svg")):
        module = tests / f"{svg.parent.name}.py"
        # syrupy's file name: the test's name, its parameters in brackets, `.N` from the 2nd
        name = re.sub(r"(\[.*\])?(\.\d+)?$", "", svg.stem)
        if not module.exists() or name not in _test_names(module):
            unused.append(f"{svg.parent.name}/{svg.name}")
    return unused


def test_every_snapshot_belongs_to_a_test():
    assert sorted(SNAPSHOT_DIR.glob("*/*.svg")), SNAPSHOT_DIR
    assert unused_snapshots(SNAPSHOT_DIR, TESTS) == []


def test_a_snapshot_of_a_renamed_test_or_a_gone_module_is_found(tmp_path):
    (tmp_path / "snaps" / "test_a").mkdir(parents=True)
    (tmp_path / "snaps" / "test_gone").mkdir()
    (tmp_path / "test_a.py").write_text("def test_kept(snap_compare): ...\n"
                                        "async def test_param(snap_compare, size): ...\n")
    for name in ("test_a/test_kept.svg", "test_a/test_param[80x24].svg",
                 "test_a/test_kept.1.svg", "test_a/test_renamed.svg", "test_gone/test_x.svg"):
        (tmp_path / "snaps" / name).write_text("<svg/>")
    assert unused_snapshots(tmp_path / "snaps", tmp_path) == [
        "test_a/test_renamed.svg", "test_gone/test_x.svg"]
