"""The .gitignore subset the file tools respect (core/tools/gitignore.py): patterns,
`dir/`, `!negation`, `*`, `?`, `**`, anchored `/x`, nested files, and the tools' globs."""

from __future__ import annotations

import pytest

from ikigai_tui.core.tools.gitignore import IgnoreFile, Ignores, glob_regex


def ignored(text: str, rel: str, is_dir: bool = False) -> bool:
    return Ignores().below("", text).ignored(rel, is_dir)


@pytest.mark.parametrize("pattern,path,is_dir,expected", [
    ("*.log", "a.log", False, True),
    ("*.log", "deep/er/a.log", False, True),  # no slash: any depth
    ("*.log", "a.log.txt", False, False),
    ("build/", "build", True, True),
    ("build/", "build", False, False),  # a trailing slash: folders only
    ("build/", "src/build", True, True),
    ("/top.txt", "top.txt", False, True),  # anchored
    ("/top.txt", "src/top.txt", False, False),
    ("docs/*.md", "docs/a.md", False, True),  # an inner slash anchors too
    ("docs/*.md", "x/docs/a.md", False, False),
    ("docs/*.md", "docs/sub/a.md", False, False),  # * stays within a name
    ("**/cache", "a/b/cache", True, True),
    ("**/cache", "cache", True, True),
    ("logs/**", "logs/a/b.txt", False, True),
    ("a/**/z.txt", "a/z.txt", False, True),
    ("a/**/z.txt", "a/b/c/z.txt", False, True),
    ("a/**/z.txt", "b/a/z.txt", False, False),
    ("file?.txt", "file1.txt", False, True),
    ("file?.txt", "file10.txt", False, False),
    ("[ab].txt", "a.txt", False, True),
    ("[!ab].txt", "a.txt", False, False),
    ("[!ab].txt", "c.txt", False, True),
    ("\\#name", "#name", False, True),
    ("# a comment", "# a comment", False, False),
])
def test_patterns(pattern, path, is_dir, expected):
    assert ignored(pattern + "\n", path, is_dir) is expected


def test_negation_brings_a_file_back_and_the_last_rule_wins():
    text = "*.log\n!keep.log\n"
    assert ignored(text, "a.log") and not ignored(text, "keep.log")
    assert ignored("!keep.log\n*.log\n", "keep.log")  # the later rule wins
    rules = IgnoreFile.parse(text)
    assert rules.decide("keep.log", False) is False and rules.decide("x.txt", False) is None


def test_a_deeper_gitignore_applies_below_its_folder_and_overrides():
    ignores = Ignores().below("", "*.tmp\n").below("sub", "!keep.tmp\n/local.txt\n")
    assert ignores.ignored("a.tmp", False) and ignores.ignored("other/keep.tmp", False)
    assert not ignores.ignored("sub/keep.tmp", False)  # sub's own rule decides
    assert ignores.ignored("sub/local.txt", False)
    assert not ignores.ignored("local.txt", False)  # anchored to sub
    assert not ignores.ignored("sub/deeper/local.txt", False)


def test_blank_lines_and_comments_make_no_rules():
    assert Ignores().below("", "\n# only a comment\n   \n").files == ()


@pytest.mark.parametrize("glob,path,expected", [
    ("**/*", "a/b/c.txt", True),
    ("**/*", "c.txt", True),
    ("*.py", "a/b/c.py", True),  # no slash: names at any depth
    ("*.py", "c.pyc", False),
    ("src/*.py", "src/a.py", True),
    ("src/*.py", "src/x/a.py", False),
    ("src/**", "src/x/a.py", True),
    ("src/**/*.py", "src/a.py", True),
    ("src/**/*.py", "lib/src/a.py", False),
])
def test_globs(glob, path, expected):
    assert bool(glob_regex(glob).match(path)) is expected
