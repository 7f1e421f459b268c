"""Links in a reply's Markdown: the user sees the real target of every clickable link.

A Markdown link shows its text and hides its target: `[https://bank.example/login]
(http://evil.example/phish)` reads as the bank and opens the phishing page (the terminal
makes it clickable through an OSC 8 hyperlink). So, as careful terminal tools do:

- a link whose text is exactly its target (an autolink, `[url](url)`) stays as it is:
  what is shown is where it goes;
- any other link loses its link: its text is shown plain, followed by the real target in
  parentheses, and only that target is clickable;
- as a last guard, after rendering, a run of cells carrying a hyperlink keeps it only if
  the cells read exactly its target: nothing reaches the terminal as a link to somewhere
  the screen does not show.

The target shown is the one the terminal would open: markdown-it's normalised form
(percent-encoded, an international host name in its `xn--` form), so look-alike letters
cannot pass for another host either. Link targets markdown-it refuses (``javascript:``,
``data:``...) are left as the plain text they were.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from rich.segment import Segment

if TYPE_CHECKING:  # markdown-it costs start-up time: it is loaded on first use
    from markdown_it.token import Token
    from rich.markdown import Markdown

_TEXT_KINDS = ("text", "code_inline")


def _plain(tokens: list[Token]) -> str | None:
    """The text of a link's inner tokens, or None when it holds more than text."""
    if not tokens or any(t.type not in _TEXT_KINDS for t in tokens):
        return None
    return "".join(t.content for t in tokens)


def _shown_target(href: str) -> list[Token]:
    from markdown_it.token import Token

    return [
        Token("text", "", 0, content=" ("),
        Token("link_open", "a", 1, attrs={"href": href}),
        Token("text", "", 0, content=href),
        Token("link_close", "a", -1),
        Token("text", "", 0, content=")"),
    ]


def show_targets(children: list[Token]) -> list[Token]:
    """An inline token's children with every link that hides its target rewritten."""
    out: list[Token] = []
    index = 0
    while index < len(children):
        token = children[index]
        if token.type != "link_open":
            out.append(token)
            index += 1
            continue
        depth, end = 0, index
        for end in range(index, len(children)):
            kind = children[end].type
            depth += 1 if kind == "link_open" else -1 if kind == "link_close" else 0
            if depth == 0:
                break
        inner = show_targets(children[index + 1 : end])
        href = str(token.attrs.get("href", ""))
        if _plain(inner) == href and href:
            out.extend([token, *inner, children[end]])
        else:
            out.extend(inner)
            if href:
                out.extend(_shown_target(href))
        index = end + 1
    return out


def markdown(text: str, code_theme: str = "monokai") -> Markdown:
    """rich's Markdown of `text`, with every link showing its real target."""
    from rich.markdown import Markdown

    rendered = Markdown(text, code_theme=code_theme)
    for token in rendered.parsed:
        if token.type == "inline" and token.children:
            token.children = show_targets(token.children)
    return rendered


def unlink_hidden(lines: list[list[Segment]]) -> list[list[Segment]]:
    """`lines` with the hyperlink removed from every run of cells that does not read
    exactly its target. A run is the cells carrying the same target, in reading order
    (across wrapped lines; blank cells between them are margins and do not count)."""
    runs: list[tuple[str, list[tuple[int, int]]]] = []
    current: tuple[str, list[tuple[int, int]]] | None = None
    for y, line in enumerate(lines):
        for x, segment in enumerate(line):
            link = segment.style.link if segment.style is not None else None
            if link:
                if current is None or current[0] != link:
                    current = (link, [])
                    runs.append(current)
                current[1].append((y, x))
            elif segment.text.strip() and not segment.control:
                current = None
    bad = [where for link, where in runs if _run_text(lines, where) != link]
    if not bad:
        return lines
    out = [list(line) for line in lines]
    for where in bad:
        for y, x in where:
            text, style, control = out[y][x]
            out[y][x] = Segment(text, style.update_link(None) if style else style, control)
    return out


def _run_text(lines: list[list[Segment]], where: Iterable[tuple[int, int]]) -> str:
    return "".join(lines[y][x].text for y, x in where).strip()
