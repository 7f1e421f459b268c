"""README.md and docs/*.md hold together (issue 30): every relative link between them (and
every #anchor) leads somewhere, every page of docs/ is reachable from the README and from
`ikigai --help`, and every `ikigai ...` command a fenced code block shows parses with the
program's own argument parser. The synopsis lines' grammar is read as written: an
optional [part] is included, each alternative of a|b is tried, a FORMAT-like placeholder
after an option with choices takes each choice, and `...` stands for the rest."""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest

from ikigai_tui.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```.*?^```[ \t]*$", re.S | re.M)


def _prose(text: str) -> str:
    """The text without code: fenced blocks and `inline spans` hold no links."""
    return re.sub(r"`[^`\n]*`", "", FENCE.sub("", text))


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip()).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    anchors = set()
    for heading in re.findall(r"^#{1,6} (.+)$", FENCE.sub("", page.read_text("utf-8")), re.M):
        slug = _slug(heading)
        anchors.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
        seen[slug] = seen.get(slug, 0) + 1
    return anchors


def _links(page: Path) -> list[str]:
    return re.findall(r"\]\(([^)\s]+)\)", _prose(page.read_text("utf-8")))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_relative_link_and_anchor_resolves(page):
    for link in _links(page):
        if re.match(r"[a-z]+:", link):  # https:, mailto: ...
            continue
        target, _, anchor = link.partition("#")
        path = (page.parent / target).resolve() if target else page
        assert path.exists(), f"{page.name}: {link} (no {path})"
        if anchor:
            assert path.suffix == ".md" and anchor in _anchors(path), f"{page.name}: {link}"


def test_every_page_of_docs_is_linked_from_the_readme_and_from_help():
    linked = {(ROOT / link.partition("#")[0]).resolve() for link in _links(ROOT / "README.md")}
    pages = set(PAGES[1:])
    assert len(pages) >= 12 and pages <= linked, sorted(p.name for p in pages - linked)
    assert "docs/" in build_parser().epilog


# ---- the commands the docs show ---------------------------------------------------------


def _command_lines() -> list[tuple[str, str]]:
    found = []
    for page in PAGES:
        for block in FENCE.findall(page.read_text("utf-8")):
            for line in block.splitlines()[1:-1]:
                if re.match(r"(\$ )?ikigai( |$)", line):  # a command, not `  ikigai · ...`
                    found.append((page.name, line))
    return found


def _choices() -> dict[str, list[str]]:
    """Each option's choices, in the program and in every command."""
    parsers = [build_parser()]
    parsers += [choice for action in parsers[0]._actions
                if isinstance(action, argparse._SubParsersAction)
                for choice in action.choices.values()]
    return {option: list(action.choices) for parser in parsers for action in parser._actions
            if action.choices and not isinstance(action, argparse._SubParsersAction)
            for option in action.option_strings}


def _variants(line: str) -> list[list[str]]:
    """The argument lists a shown line stands for (see the module's docstring)."""
    line = line.removeprefix("$ ")
    line = re.sub(r"\[([^\[\]]*)\]", lambda m: "[" + m.group(1).replace(" | ", "|") + "]", line)
    words = shlex.split(line, comments=True)
    if "|" in words:  # a pipe to another program
        words = words[:words.index("|")]
    choices = _choices()
    slots: list[list[str]] = []
    for word in words:
        word = word.replace("[", "").replace("]", "")
        if word == "...":
            continue
        if re.fullmatch(r"[A-Z]+", word) and slots and slots[-1][0] in choices:
            slots.append(choices[slots[-1][0]])
        else:
            slots.append(word.split("|") if "|" in word and word != "|" else [word])
    base = [slot[0] for slot in slots]
    variants = [base]
    for i, slot in enumerate(slots):
        variants += [base[:i] + [other] + base[i + 1:] for other in slot[1:]]
    return variants


COMMANDS = _command_lines()


def test_the_docs_show_commands():
    assert len(COMMANDS) >= 12, COMMANDS  # the synopsis and the examples


@pytest.mark.parametrize("page,line", COMMANDS, ids=[line for _, line in COMMANDS])
def test_every_command_shown_parses(page, line):
    for words in _variants(line):
        assert words[0] == "ikigai", (page, line)
        errors = io.StringIO()
        try:
            with contextlib.redirect_stderr(errors), contextlib.redirect_stdout(io.StringIO()):
                build_parser().parse_args(words[1:])
        except SystemExit as exit:
            assert exit.code == 0, f"{page}: {' '.join(words)}\n{errors.getvalue()}"


def test_a_command_the_parser_refuses_is_caught():
    """The check above can fail: a misspelt option, a wrong choice, a missing value."""
    for line in ("ikigai [--db PATH] context [--jsn]", "ikigai export [--format md|html]",
                 "ikigai -p"):
        with pytest.raises(AssertionError):
            test_every_command_shown_parses("example", line)
