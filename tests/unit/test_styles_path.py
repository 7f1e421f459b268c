"""The stylesheets are read from the top-level styles/ of a clone (issue 30; the installed
wheel's ikigai_tui/styles is checked by tests/integration/test_wheel_install.py): the app
and every screen name files that exist there, and every file there is used."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path

import ikigai_tui.tui.screens
from ikigai_tui.tui.app import IkigaiApp
from ikigai_tui.tui.styles_path import STYLES

ROOT = Path(__file__).resolve().parents[2]


def _css_paths() -> dict[str, list[Path]]:
    found = {"IkigaiApp": [Path(p) for p in IkigaiApp.CSS_PATH]}
    for module in pkgutil.iter_modules(ikigai_tui.tui.screens.__path__):
        loaded = importlib.import_module(f"ikigai_tui.tui.screens.{module.name}")
        for name, cls in inspect.getmembers(loaded, inspect.isclass):
            css = cls.__dict__.get("CSS_PATH")
            if css and cls.__module__ == loaded.__name__:
                found[name] = [Path(p) for p in (css if isinstance(css, list) else [css])]
    return found


def test_a_clone_reads_its_top_level_styles():
    assert STYLES == ROOT / "styles"
    assert not (ROOT / "ikigai_tui" / "styles").exists()


def test_every_stylesheet_named_is_in_styles_and_every_one_there_is_named():
    named = _css_paths()
    assert len(named) >= 8, named  # the app and its screens
    for owner, paths in named.items():
        for path in paths:
            assert path.parent == STYLES and path.is_file(), (owner, path)
    used = {path.name for paths in named.values() for path in paths}
    assert used == {p.name for p in STYLES.glob("*.tcss")}
