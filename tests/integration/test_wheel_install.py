"""The package as `pip install .` and `pipx install .` install it: a wheel built from the
sources, installed into a fresh virtual environment, starts the app with its stylesheets,
which live in the top-level styles/ of the source tree (issue 30). Offline: the wheel is
built without build isolation, and the fresh environment borrows the test environment's
dependencies through a path file, never its editable ikigai_tui."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Runs in the fresh environment: the app from the wheel, its stylesheets from the wheel.
START = r"""
import asyncio, sys, sysconfig
from pathlib import Path

import ikigai_tui
from ikigai_tui import config as config_module
from ikigai_tui.runtime import create_app
from ikigai_tui.tui.styles_path import STYLES

site = Path(sysconfig.get_paths()["purelib"]).resolve()
assert Path(ikigai_tui.__file__).resolve().is_relative_to(site), ikigai_tui.__file__
assert STYLES == site / "ikigai_tui" / "styles", STYLES
tmp = Path(sys.argv[1])
config = config_module.load(db=str(tmp / "wheel.db"), config_path=str(tmp / "none.toml"),
                            env={"IKIGAI_OFFLINE_DELAY": "0"})

def loaded(app):
    return {Path(path).name for path, _ in app.stylesheet.source if path.endswith(".tcss")
            and Path(path).resolve().is_relative_to(site)}

async def main():
    app = create_app(config)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause(0.3)
        print("main", *sorted(loaded(app)))
        print("status height", app.query_one("#status").styles.height)
        await pilot.press("f1")
        await pilot.pause(0.3)
        print("help", type(app.screen).__name__, *sorted(loaded(app)))

asyncio.run(main())
"""


def _sources(dest: Path) -> Path:
    """What `pip install .` reads, copied: a build writes build/ and *.egg-info beside it."""
    src = dest / "src"
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        src.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, src / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for folder in ("ikigai_tui", "styles"):
        shutil.copytree(ROOT / folder, src / folder, ignore=ignore)
    return src


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, Path]:
    """(the wheel, the fresh environment's bin/) ."""
    tmp = tmp_path_factory.mktemp("wheel")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input"]
    subprocess.run([*pip, "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q",
                    "-w", str(tmp / "dist"), str(_sources(tmp))],
                   check=True, env=env, cwd=tmp, timeout=120)
    wheel = next((tmp / "dist").glob("ikigai_tui-*.whl"))
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   env=env, timeout=60)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig;"
                                "print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    # The dependencies, as a plain path entry: its own .pth files (the editable
    # ikigai_tui's among them) are not read, so ikigai_tui can only come from the wheel.
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([*pip, "--python", str(python), "install", "--no-deps", "--no-index", "-q",
                    str(wheel)], check=True, env=env, cwd=tmp, timeout=120)
    return wheel, venv / "bin"


def _run(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "NO_COLOR", "TEXTUAL_THEME")}
    return subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd, timeout=120)


def test_the_wheel_holds_every_module_and_the_stylesheets(installed):
    wheel, _bin = installed
    names = set(zipfile.ZipFile(wheel).namelist())
    modules = {p.relative_to(ROOT).as_posix() for p in (ROOT / "ikigai_tui").rglob("*.py")}
    assert modules and modules <= names, sorted(modules - names)  # no package left unlisted
    styles = {f"ikigai_tui/styles/{p.name}" for p in (ROOT / "styles").glob("*.tcss")}
    assert "ikigai_tui/styles/app.tcss" in styles and styles <= names, sorted(styles - names)


def test_the_installed_command_starts_and_points_to_the_docs(installed, tmp_path):
    _wheel, bin_dir = installed
    shown = _run(str(bin_dir / "ikigai"), "--help", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "docs/" in shown.stdout


def test_the_installed_app_styles_its_screens_from_the_wheel(installed, tmp_path):
    _wheel, bin_dir = installed
    started = _run(str(bin_dir / "python"), "-c", START, str(tmp_path), cwd=tmp_path)
    assert started.returncode == 0, started.stderr[-3000:]
    lines = started.stdout.splitlines()
    assert "main app.tcss widgets.tcss" in lines, started.stdout
    assert "status height 1" in lines, started.stdout  # a rule of app.tcss in force
    assert "help HelpScreen app.tcss screens.tcss widgets.tcss" in lines, started.stdout
