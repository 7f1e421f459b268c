"""Transcript items -> lines of terminal cells (Strips), at a given width.

Every text that came from an LLM, a tool or a user is sanitized first, so escape and
control sequences are shown, never interpreted by the terminal; every link shows its
real target (see `links`).

A long item is folded: its first `FOLD_CHARS` characters (or `FOLD_LINES` lines) are
drawn, then a line saying how much more there is and that Ctrl+O shows all. Drawing
costs the same for a 10 MB reply as for a 16 KB one, and no item holds more than about
`MAX_ITEM_LINES` lines, so the scrollback's bounded range always has room for what
follows it. Expanded (Ctrl+O), a folded item is shown whole as plain text, its lines
made only when they come into view (`WrappedText`).
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console, RenderableType
from rich.rule import Rule
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.strip import Strip

from ikigai_tui.tui.links import markdown, unlink_hidden
from ikigai_tui.tui.safe_text import sanitize
from ikigai_tui.tui.transcript import Item
from ikigai_tui.tui.widgets.lines import Lines, WrappedText

USER = Style(bold=True, color="bright_white")
USER_MARK = Style(bold=True, color="cyan")
TOOL = Style(color="bright_black")
COMMAND = Style(color="cyan")
OUTPUT = Style(color="bright_black")
ERROR = Style(color="red", bold=True)
NOTE = Style(color="bright_black", italic=True)
FOLD = Style(color="yellow", italic=True)
RULE = Style(color="yellow")
TOOL_PREVIEW = 80
FOLD_CHARS = 16_000  # an item longer than this is folded to its first FOLD_CHARS...
FOLD_LINES = 300  # ... or to its first FOLD_LINES lines
MAX_ITEM_LINES = 1_000  # drawn lines of one folded item, at any width (a last guard)
_KIND_STYLE = {"user": USER, "tool_call": TOOL, "tool_result": TOOL, "command": COMMAND,
               "error": ERROR, "note": NOTE}


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
    # Only the start is looked at: a 10 MB argument costs what a short one does.
    line = " ".join(text[: TOOL_PREVIEW * 4].split())
    if len(line) <= TOOL_PREVIEW and len(text) <= TOOL_PREVIEW * 4:
        return line
    return line[: TOOL_PREVIEW - 1] + "…"


# -- folding -----------------------------------------------------------------------


def _size(item: Item) -> tuple[int, int]:
    """The item's characters and lines (a command's output included)."""
    chars, lines = len(item.text), item.text.count("\n")
    if item.kind == "command":
        output = item.meta.get("output") or []
        chars += sum(len(str(line)) + 3 for line in output)
        lines += len(output)
    return chars, lines


def folds(item: Item) -> bool:
    """Whether the item is too long to draw whole in the transcript."""
    if item.kind in ("rule", "stream"):
        return False
    chars, lines = _size(item)
    return chars > FOLD_CHARS or lines > FOLD_LINES


def _head(text: str) -> str:
    """The start of `text` that a folded item shows: FOLD_CHARS at most, FOLD_LINES
    lines at most, ending at a line end when one is near."""
    head = text[:FOLD_CHARS]
    end = -1
    for _ in range(FOLD_LINES):
        end = head.find("\n", end + 1)
        if end < 0:
            break
    else:
        head = head[:end]
    if len(head) == FOLD_CHARS:
        cut = head.rfind("\n", FOLD_CHARS * 3 // 4)
        if cut > 0:
            head = head[:cut]
    return head


def _head_item(item: Item) -> Item:
    if item.kind != "command":
        return Item(item.key, item.kind, _head(item.text), item.meta)
    text = _head(item.text)
    room = FOLD_CHARS - len(text)
    output: list[str] = []
    for line in item.meta.get("output") or []:
        line = str(line)
        if room <= 0 or len(output) >= FOLD_LINES:
            break
        output.append(_head(line)[:room])
        room -= len(output[-1]) + 3
    return Item(item.key, item.kind, text, {**item.meta, "output": output})


def _whole_text(item: Item) -> str:
    if item.kind == "tool_call":
        return f"{item.meta.get('name', '?')} {item.text}"
    if item.kind == "command":
        return "\n".join([item.text, *("  " + str(line) for line in item.meta.get("output") or [])])
    return item.text


def _note(text: str, width: int, style: Style) -> list[Strip]:
    text = text if len(text) <= width else text[: max(1, width - 1)] + "…"
    return [Strip([Segment(text, style)])]


# -- drawing -------------------------------------------------------------------------


def render_item(console: Console, item: Item, width: int, *, expanded: bool = False,
                gap: bool = True) -> Sequence[Strip]:
    """The item's lines at this width, with a blank line after it."""
    width = max(1, width)
    tail = [Strip.blank(0)] if gap and item.kind != "tool_call" else []
    if folds(item) and (expanded or item.kind not in ("tool_call", "tool_result")):
        # (Folded tool entries show one line already.)
        chars, _lines = _size(item)
        if expanded:
            whole = WrappedText(sanitize(_whole_text(item)), width, _KIND_STYLE.get(item.kind))
            head = _note(f"▾ {chars:,} characters, shown whole as plain text · Ctrl+O folds it",
                         width, FOLD)
            return Lines([head, whole, tail])
        shown = _head_item(item)
        strips = _draw(console, _renderable(shown, False), width)[: MAX_ITEM_LINES - 1]
        hidden = max(0, chars - _size(shown)[0])
        note = _note(f"… {hidden:,} more characters not shown ({chars:,} in all) · Ctrl+O shows all",
                     width, FOLD)
        return strips + note + tail
    return _draw(console, _renderable(item, expanded), width) + tail


def _draw(console: Console, renderable: RenderableType, width: int) -> list[Strip]:
    options = console.options.update(width=width, height=None)
    lines = unlink_hidden(console.render_lines(renderable, options, pad=False))
    return [Strip(line) for line in lines]


def render_text_lines(console: Console, text: str, width: int) -> list[Strip]:
    """Plain wrapped text (a reply while it streams)."""
    return _draw(console, Text(sanitize(text)), max(1, width))
