"""Transcript items -> lines of terminal cells (Strips), at a given width.

Every text that came from an LLM, a tool or a user is sanitized first, so escape and
control sequences are shown, never interpreted by the terminal; every link shows its
real target (see `links`).
"""

from __future__ import annotations

from rich.console import Console, RenderableType
from rich.rule import Rule
from rich.style import Style
from rich.text import Text
from textual.strip import Strip

from ikigai_tui.tui.links import markdown, unlink_hidden
from ikigai_tui.tui.safe_text import sanitize
from ikigai_tui.tui.transcript import Item

USER = Style(bold=True, color="bright_white")
USER_MARK = Style(bold=True, color="cyan")
TOOL = Style(color="bright_black")
COMMAND = Style(color="cyan")
OUTPUT = Style(color="bright_black")
ERROR = Style(color="red", bold=True)
NOTE = Style(color="bright_black", italic=True)
RULE = Style(color="yellow")
TOOL_PREVIEW = 80


def _renderable(item: Item, expanded: bool) -> RenderableType:
    text = sanitize(item.text)
    kind = item.kind
    if kind == "user":
        out = Text("› ", style=USER_MARK)
        out.append(text, style=USER)
        return out
    if kind == "assistant":
        body: RenderableType = markdown(text) if text else Text("")
        if item.meta.get("interrupted"):
            from rich.console import Group

            return Group(body, Text(f"[interrupted: {sanitize(str(item.meta.get('reason') or ''))}]",
                                    style=NOTE))
        return body
    if kind == "stream":
        return Text(text)
    if kind == "tool_call":
        name = sanitize(str(item.meta.get("name", "?")))
        shown = text if expanded else _one_line(text)
        return Text.assemble(("  ▸ ", TOOL), (name, TOOL + Style(bold=True)), (" " + shown, TOOL))
    if kind == "tool_result":
        style = ERROR if item.meta.get("error") else TOOL
        shown = text if expanded else _one_line(text)
        return Text.assemble(("  ◂ ", TOOL), (shown, style))
    if kind == "command":
        out = Text(text, style=COMMAND)
        for line in item.meta.get("output", []):
            out.append("\n  " + sanitize(str(line)), style=OUTPUT)
        return out
    if kind == "error":
        return Text(text if text.startswith("Error:") else f"Error: {text}", style=ERROR)
    if kind == "rule":
        return Rule(text, style=RULE, characters="─")
    return Text(text, style=NOTE)


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= TOOL_PREVIEW else line[: TOOL_PREVIEW - 1] + "…"


def render_item(console: Console, item: Item, width: int, *, expanded: bool = False,
                gap: bool = True) -> list[Strip]:
    """The item's lines at this width, with a blank line after it."""
    options = console.options.update(width=max(1, width), height=None)
    lines = unlink_hidden(console.render_lines(_renderable(item, expanded), options, pad=False))
    strips = [Strip(line) for line in lines]
    if gap and item.kind not in ("tool_call",):
        strips.append(Strip.blank(0))
    return strips


def render_text_lines(console: Console, text: str, width: int) -> list[Strip]:
    """Plain wrapped text (a reply while it streams)."""
    options = console.options.update(width=max(1, width), height=None)
    return [Strip(line) for line in console.render_lines(Text(sanitize(text)), options, pad=False)]
