"""Where the stylesheets are: the top-level ``styles/`` of the source tree, installed as
the data package ``ikigai_tui.styles`` (pyproject maps it with package-dir).

An installed wheel (``pip install .``, ``pipx install .``) has them beside the package's
modules, in ``ikigai_tui/styles/``; a clone, run in place or installed editable (a plain
path entry, or setuptools' import hook, both leave ``ikigai_tui`` in the clone), has them
in the clone's ``styles/``. Two path checks, no import: this is read at start-up."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent  # ikigai_tui/


def _find() -> Path:
    for folder in (_PACKAGE / "styles", _PACKAGE.parent / "styles"):
        if (folder / "app.tcss").is_file():
            return folder
    raise FileNotFoundError(f"the stylesheets (app.tcss) are neither in {_PACKAGE / 'styles'}"
                            f" nor in {_PACKAGE.parent / 'styles'}: reinstall ikigai-tui")


STYLES = _find()


def stylesheet(name: str) -> Path:
    """The path of one stylesheet, e.g. ``stylesheet("screens.tcss")``."""
    return STYLES / name
