"""README's install instructions are true for a clone: no placeholder to fill in, every
`make` target it names exists, and `pip install .` has what it needs (a build backend and
the `ikigai` command)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _install_section() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("## Install")
    return text[start:text.index("\n## ", start + 1)]


def test_the_install_section_has_no_placeholder_and_works_from_a_clone():
    section = _install_section()
    assert not re.search(r"URL_OF|<[^>\n]*(url|repo)[^>\n]*>|git\+", section, re.I), section
    assert "make run" in section
    assert re.search(r"^pip install \.", section, re.M), section


def test_every_make_target_the_readme_names_exists():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([a-z][\w-]*):", makefile, re.M))
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:  # and docs/
        text = page.read_text(encoding="utf-8")
        named = set(re.findall(r"(?:`|^)make ([a-z][\w-]*)", text, re.M))  # as a command
        assert named <= targets, (page.name, named - targets)
        if page.name == "README.md":
            assert {"run", "test"} <= named, named


def test_pip_install_dot_has_a_backend_and_the_command():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["build-system"]["build-backend"]
    assert project["project"]["scripts"]["ikigai"] == "ikigai_tui.cli:main"
