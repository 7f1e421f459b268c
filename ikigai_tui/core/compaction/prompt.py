"""What a summarising model is asked, and the summary made without one.

The instruction asks for fixed sections (goal, decisions with their reasons, the user's
constraints, files and artefacts, errors and their fixes, open questions, next steps)
and an artifact trail: every file, command, URL and identifier named, verbatim. The trail
is also checked mechanically: whatever the messages name that the model's summary left
out is added under it, since artifacts are what summaries lose first.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ikigai_tui.core.matching import Candidate, exchanges, render_message

SECTIONS = (
    "Goal", "Decisions (each with its reason)", "Constraints the user stated",
    "Files and artefacts touched", "Errors met and how they were solved", "Open questions",
    "Next steps", "Artifact trail",
)

SYSTEM = (
    "You summarise a conversation between a user and an AI assistant so that the assistant "
    "can carry on the work from your summary alone: the messages themselves will no longer "
    "be shown to it. Each message below is labelled [#ID ROLE]. Write the summary as "
    "Markdown with exactly these sections, in this order, each a '## ' heading:\n"
    + "\n".join(f"## {s}" for s in SECTIONS)
    + "\nUnder each decision say why it was made. Quote the user's constraints in their own "
    "words. Under 'Artifact trail' list, one per line and verbatim, every file path, command, "
    "URL and identifier (function, class, table, branch, ticket, version) the conversation "
    "names. Write 'none' under a section with nothing in it. State only what the "
    "conversation says; never invent. Reply with the summary only."
)

FOCUS = ("The user asks this summary to focus on: {focus}\nKeep everything about it in full "
         "detail; other topics may be shortened, but never drop a decision, a constraint or "
         "an artifact.")

PIECE = ("This is part {part} of {parts} of the conversation (messages #{first} to #{last}), "
         "in order; summarise this part only.")

MERGE = (
    "Below are summaries of consecutive parts of one conversation, oldest first. Merge them "
    "into one summary with the same sections. Keep every decision, constraint, error and "
    "artifact (verbatim); where a later part changes an earlier decision, keep the later "
    "one and say it changed."
)

TRAIL_HEADING = "## Artifact trail"
TRAIL_ADDED = "Also named in the replaced messages (added by ikigai, verbatim):"
EXTRACTIVE_TITLE = ("Extractive summary (the offline model cannot summarise: the user's "
                    "requests and the first lines of the replies, as written)")
MAX_ARTIFACTS = 200
ARTIFACT_CHARS = 200
REQUEST_CHARS = 300  # of a request in an extractive summary (FOCUS-matching ones: more)
FOCUS_REQUEST_CHARS = 1_200
REPLY_CHARS = 200


def system_prompt(focus: str | None) -> str:
    return SYSTEM + ("\n\n" + FOCUS.format(focus=focus) if focus else "")


def render_piece(chunk: Sequence[Candidate], part: int, parts: int, limit: int | None = None) -> str:
    body = "\n\n".join(render_message(c, limit) for c in chunk)
    head = (PIECE.format(part=part, parts=parts, first=chunk[0].id, last=chunk[-1].id)
            if parts > 1 else f"The conversation (messages #{chunk[0].id} to #{chunk[-1].id}):")
    return f"{head}\n\n{body}\n\nWrite the summary now."


def render_merge(summaries: Sequence[str]) -> str:
    body = "\n\n".join(f"=== Part {n} ===\n{s}" for n, s in enumerate(summaries, 1))
    return f"{MERGE}\n\n{body}\n\nWrite the merged summary now."


# -- the artifact trail --------------------------------------------------------------------

_URL = re.compile(r"https?://[^\s<>()\[\]{}\"'`]+")
_TICKED = re.compile(r"`([^`\n]{2,%d})`" % ARTIFACT_CHARS)
_EXTENSIONS = frozenset(
    "py pyi md txt toml json yaml yml ini cfg js ts tsx jsx css tcss html sql db sh c h cpp rs "
    "go java rb lock csv svg".split())
_PATH = re.compile(r"(?:~?/|\.{1,2}/)?[\w.-]+(?:/[\w.-]+)*")
_EDGES = "()[]{}<>\"'`,;:!?*"


def _is_path(word: str) -> bool:
    if "/" in word:
        return not word.startswith("//") and "://" not in word and word.strip("/.") != "" \
            and _PATH.fullmatch(word) is not None
    stem, dot, ext = word.rpartition(".")
    return bool(dot and stem and ext in _EXTENSIONS and _PATH.fullmatch(word))


def artifacts(texts: Sequence[str]) -> list[str]:
    """Files, URLs and `quoted` commands or identifiers the texts name, in order, once.
    Words are split by whitespace first (a regex over every character of a big context
    costs a second)."""
    found: dict[str, None] = {}
    for text in texts:
        if "://" in text:
            for match in _URL.finditer(text):
                found.setdefault(match.group(0).rstrip(".,:;")[:ARTIFACT_CHARS], None)
        if "`" in text:
            for match in _TICKED.finditer(text):
                found.setdefault(match.group(1).strip()[:ARTIFACT_CHARS], None)
        if "/" in text or "." in text:
            for word in [w for w in text.split() if "/" in w or "." in w[:-1]]:
                word = word.strip(_EDGES).rstrip(".")
                if len(word) >= 2 and word not in found and _is_path(word):
                    found[word[:ARTIFACT_CHARS]] = None
        if len(found) >= MAX_ARTIFACTS:
            break
    return list(found)[:MAX_ARTIFACTS]


def complete_trail(summary: str, sources: Sequence[str]) -> str:
    """The summary with every artifact the sources name and it does not, added verbatim."""
    return add_missing(summary, artifacts(sources))


def add_missing(summary: str, named: Sequence[str]) -> str:
    """The summary with each of the `named` artifacts it lacks added under its trail."""
    missing = [a for a in named if a not in summary]
    if not missing:
        return summary
    listed = "\n".join(f"- {a}" for a in missing)
    if TRAIL_HEADING not in summary:
        return f"{summary.rstrip()}\n\n{TRAIL_HEADING}\n{TRAIL_ADDED}\n{listed}"
    return f"{summary.rstrip()}\n{TRAIL_ADDED}\n{listed}"


# -- without a model -----------------------------------------------------------------------


def _cut(text: str, limit: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _first_lines(text: str, limit: int) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return _cut(" / ".join(lines[:3]), limit)


def extractive(candidates: Sequence[Candidate], focus: str | None, max_chars: int) -> str:
    """The user's requests and the first lines of the replies, turn by turn, and the
    artifact trail: made without any model, and labelled so. Requests that share a word
    with FOCUS keep more of their text. At most `max_chars` of turns (the first and the
    latest kept, a count of those left out between)."""
    words = {w for w in re.findall(r"\w{3,}", (focus or "").lower())}
    entries: list[str] = []
    for group in exchanges(candidates):
        lines: list[str] = []
        tools: list[str] = []
        replied = False
        for c in group:
            if c.kind == "user":
                hit = words and words & set(re.findall(r"\w{3,}", c.text.lower()))
                lines.append(f"- [#{c.id}] User: "
                             f"{_cut(c.text, FOCUS_REQUEST_CHARS if hit else REQUEST_CHARS)}")
            elif c.kind == "summary":
                lines.append(f"- [#{c.id}] Earlier summary: {_cut(c.text, FOCUS_REQUEST_CHARS)}")
            elif c.kind == "assistant" and not replied and c.text.strip():
                lines.append(f"  Reply: {_first_lines(c.text, REPLY_CHARS)}")
                replied = True
            elif c.kind == "tool_call":
                tools.append(c.text.split("(", 1)[0])
        if tools:
            lines.append(f"  Tools: {', '.join(dict.fromkeys(tools))}")
        if lines:
            entries.append("\n".join(lines))
    kept = _fit(entries, max_chars)
    trail = artifacts([c.text for c in candidates])
    parts = [EXTRACTIVE_TITLE + "."]
    if focus:
        parts.append(f"Focus asked: {focus}")
    parts.append("## Requests and replies\n" + ("\n".join(kept) or "none"))
    parts.append(TRAIL_HEADING + "\n" + ("\n".join(f"- {a}" for a in trail) or "none"))
    return "\n\n".join(parts)


def _fit(entries: list[str], max_chars: int) -> list[str]:
    if sum(len(e) + 1 for e in entries) <= max_chars:
        return entries
    head: list[str] = []
    tail: list[str] = []
    used = 0
    i, j = 0, len(entries) - 1
    while i <= j:
        take_tail = len(tail) < len(head)
        entry = entries[j] if take_tail else entries[i]
        if used + len(entry) + 1 > max_chars:
            break
        used += len(entry) + 1
        if take_tail:
            tail.insert(0, entry)
            j -= 1
        else:
            head.append(entry)
            i += 1
    skipped = len(entries) - len(head) - len(tail)
    return [*head, f"- ... {skipped:,} turns not listed ...", *tail]
