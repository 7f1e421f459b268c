"""The common subset of .gitignore, for the file tools (list_files, search_files).

Supported: blank lines and `#` comments, `\\#` and `\\!` escapes, `!negation`, a trailing
`/` (folders only), a leading or inner `/` (anchored to the .gitignore's own folder),
`*`, `?`, `[...]` and `**` (`**/x`, `x/**`, `a/**/b`). A .gitignore applies to the
folder it is in and below; a deeper file's rules come after its parents', and the last
rule that matches a path decides (as in git). What git does not do either: a file inside
an ignored folder cannot be brought back (the walk never enters the folder). Not
supported: `.git/info/exclude`, the global excludes file, trailing-space escapes.

Globs (the tools' `glob` arguments) use the same translation: `glob_regex`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


def _translate(pattern: str) -> str:
    """A glob (no leading or trailing slash) -> a regular expression over a relative
    path with `/` between its names; the expression matches the whole path."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                before = i == 0 or pattern[i - 1] == "/"
                after = i + 2 == n or pattern[i + 2] == "/"
                if before and after:
                    if i + 2 == n:  # `x/**` or `**`: everything below
                        out.append(".*")
                        i += 2
                    else:  # `**/`: any folders, none too
                        out.append("(?:.*/)?")
                        i += 3
                    continue
            out.append("[^/]*")
            while i < n and pattern[i] == "*":
                i += 1
            continue
        if c == "?":
            out.append("[^/]")
        elif c == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1:i + 2] in ("!", "^") else i + 1)
            if end < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1:end]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end + 1
                continue
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def glob_regex(glob: str) -> re.Pattern[str]:
    """A tool's glob over workspace-relative paths: one without `/` matches a name at any
    depth (`*.py`), one with `/` the whole path from the workspace (`src/**/*.py`)."""
    glob = glob.strip().lstrip("/") or "**/*"
    body = _translate(glob)
    if "/" not in glob:
        body = "(?:.*/)?" + body
    return re.compile(body + r"\Z", re.DOTALL)


@dataclass(frozen=True)
class Rule:
    regex: re.Pattern[str]
    negate: bool
    dir_only: bool


def parse_rules(text: str) -> list[Rule]:
    """The rules of one .gitignore's text, in order."""
    rules: list[Rule] = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        if negate:
            line = line[1:]
        elif line.startswith(("\\#", "\\!")):
            line = line[1:]
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        line = line.lstrip("/")
        body = _translate(line)
        if not anchored:
            body = "(?:.*/)?" + body
        rules.append(Rule(re.compile(body + r"\Z", re.DOTALL), negate, dir_only))
    return rules


class IgnoreFile:
    """The rules of one .gitignore, for paths relative to its folder."""

    __slots__ = ("rules", "_any", "_dirs")

    def __init__(self, rules: list[Rule]) -> None:
        self.rules = rules
        # Without negations, one alternation per kind answers at once (the common case).
        self._any = self._dirs = None
        if rules and not any(r.negate for r in rules):
            files = [r.regex.pattern for r in rules if not r.dir_only]
            every = [r.regex.pattern for r in rules]
            self._any = re.compile("|".join(f"(?:{p})" for p in files), re.DOTALL) if files else None
            self._dirs = re.compile("|".join(f"(?:{p})" for p in every), re.DOTALL)

    @classmethod
    def parse(cls, text: str) -> IgnoreFile:
        return cls(parse_rules(text))

    def decide(self, rel: str, is_dir: bool) -> bool | None:
        """True: ignored, False: brought back by a `!` rule, None: no rule matches."""
        if self._dirs is not None:
            found = (self._dirs if is_dir else self._any)
            return True if found is not None and found.match(rel) else None
        for rule in reversed(self.rules):
            if rule.dir_only and not is_dir:
                continue
            if rule.regex.match(rel):
                return not rule.negate
        return None


class Ignores:
    """The .gitignore files met on the way down: (folder relative to the root, rules)."""

    __slots__ = ("files",)

    def __init__(self, files: tuple[tuple[str, IgnoreFile], ...] = ()) -> None:
        self.files = files

    def below(self, folder: str, text: str | None) -> Ignores:
        """These rules and those of `folder`'s own .gitignore text (None: it has none)."""
        if text is None:
            return self
        found = IgnoreFile.parse(text)
        if not found.rules:
            return self
        return Ignores((*self.files, (folder, found)))

    def ignored(self, rel: str, is_dir: bool) -> bool:
        """Whether the path `rel` (relative to the root) is ignored: the deepest file with
        a matching rule decides."""
        for folder, rules in reversed(self.files):
            if folder:
                if not rel.startswith(folder + "/"):
                    continue
                sub = rel[len(folder) + 1:]
            else:
                sub = rel
            verdict = rules.decide(sub, is_dir)
            if verdict is not None:
                return verdict
        return False
