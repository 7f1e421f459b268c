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

import json
import re
import time
from collections.abc import Sequence
from itertools import groupby

from rich.cells import cell_len
from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.rule import Rule
from rich.segment import Segment
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.strip import Strip

from ikigai_tui.core.times import relative_times
from ikigai_tui.tui.fit import fit
from ikigai_tui.tui.links import markdown, unlink_hidden
from ikigai_tui.tui.palette import PLAIN, Palette
from ikigai_tui.tui.safe_text import sanitize
from ikigai_tui.tui.tool_line import result_line, tool_line
from ikigai_tui.tui.transcript import Item
from ikigai_tui.tui.lines import Lines, Mapped, WrappedText

TOOL_PREVIEW = 80
FOLD_CHARS = 16_000  # an item longer than this is folded to its first FOLD_CHARS...
FOLD_LINES = 300  # ... or to its first FOLD_LINES lines
MAX_ITEM_LINES = 1_000  # drawn lines of one folded item, at any width (a last guard)
clock = time.time  # "now", for the times an entry says relative to it (core/times.py)
OUTSIDE_BAR = "┊ "  # the left edge of a message out of the context
MESSAGE_KINDS = frozenset({"user", "assistant", "tool_call", "tool_result"})  # have ids


def _kind_style(kind: str, p: Palette) -> Style | None:
    return {"user": p.user, "tool_call": p.tool, "tool_result": p.tool, "command": p.command,
            "error": p.error, "note": p.note}.get(kind)


def _renderable(item: Item, expanded: bool, p: Palette, width: int = 80,
                pair: Item | None = None, running: str | None = None) -> RenderableType:
    text = sanitize(item.text)
    kind = item.kind
    if kind == "user":
        out = Text("› ", style=p.user_mark)
        out.append(text, style=p.user)
        return out
    if kind == "assistant":
        body: RenderableType = markdown(text, p.code_theme) if text else Text("")
        if item.meta.get("interrupted"):
            return Group(body, Text(f"[interrupted: {sanitize(str(item.meta.get('reason') or ''))}]",
                                    style=p.note))
        return body
    if kind == "stream":
        return Text(text)
    if kind == "tool_call":
        name = sanitize(str(item.meta.get("name", "?")))
        if not expanded and name != "slash":
            return tool_line(item, pair, p, width, running, clock())
        if expanded:
            return _hanging("  ▸ ", Text.assemble((name, p.tool + Style(bold=True)),
                                                  (" " + text, p.tool)), p)
        return Text.assemble(("  ▸ ", p.tool), (name, p.tool + Style(bold=True)),
                             (" " + _one_line(_slash_command(item) or text), p.tool))
    if kind == "tool_result":
        if not expanded and pair is None:  # its call is not at hand: how it ended, its size
            return result_line(Text("  ◂ ", style=p.tool), item, None, p, width)
        style = p.error if item.meta.get("error") else p.tool
        if expanded:
            return _hanging("  ◂ ", Text(text.rstrip("\n"), style=style), p)
        return Text.assemble(("  ◂ ", p.tool), (_one_line(text), style))
    if kind == "command":
        now = clock()  # "5 minutes ago" is said as of this drawing, not as logged
        output = [sanitize(relative_times(str(line), now)) for line in item.meta.get("output", [])]
        if not output:
            return Text(text, style=p.command)
        return Group(Text(text, style=p.command), *_output_blocks(output, p.output, width))
    if kind == "error":
        return Text(text if text.startswith("Error:") else f"Error: {text}", style=p.error)
    if kind == "mail":  # its text shows once, when /check-mail reads it into the context
        lines = len(text.splitlines()) or 1
        size = f"{lines} line{'s' if lines != 1 else ''}, {len(text):,} characters"
        what = item.meta.get("what", "mail")  # mail, report, failure report (/fork --report)
        return Text.assemble((f"✉ {what} from {sanitize(item.meta.get('from', '?'))}", p.command),
                             (f" · {size} · /check-mail reads it", p.note))
    if kind == "rule":  # its words shortened to the width by whole parts, never cut
        parts = text.strip().split(" · ")
        words = fit([f" {' · '.join(parts[:n])} " for n in range(len(parts), 0, -1)], width - 4)
        return Rule(words, style=p.rule, characters="─")
    return Text(text, style=p.note)


# A row of a table in command output (/context): "  label   1,234  (a note)".
_TABLE_ROW = re.compile(r"^(?P<label>\S.*?) {2,}(?P<figure>[-\d,.$%~]+[KM]?)(?: {2,}(?P<note>.*))?$")
NOTE_MIN = 12  # a note column narrower than this goes under its row instead


def _output_blocks(lines: list[str], style: Style, width: int) -> list[RenderableType]:
    """A command's output lines, indented by two: a line that wraps goes on under its own
    start (a hanging indent, not column 0), and rows of figures stay a table whose
    columns shrink to a narrow pane (labels cut with "…", notes wrapped in their column)."""
    blocks: list[RenderableType] = []
    for (indent, table), run in groupby(lines, key=lambda line: _shape(line)):
        run = [line[indent:] for line in run]
        left = min(2 + indent, width // 3)  # a narrow pane keeps most of its width for text
        if table:
            rows = [_TABLE_ROW.match(line) for line in run]
            assert all(rows)
            label_w = max(cell_len(r["label"]) for r in rows)
            figure_w = max(cell_len(r["figure"]) for r in rows)
            # Too narrow for notes beside the figures ("mes/sag/es"): each note goes on
            # the line under its row, under the label, and the figures stay a table.
            if width - left - label_w - figure_w - 4 >= NOTE_MIN:
                body: RenderableType = _table(rows, style)
            else:
                body = _stacked(rows, style, max(4, min(label_w, width - left - figure_w - 2)),
                                figure_w)
        else:
            body = Text("\n".join(run), style=style)
        blocks.append(Padding(body, (0, 0, 0, left)))
    return blocks


def _table(rows: list[re.Match], style: Style) -> Table:
    """Label, figure (right-aligned) and note (wrapped in its column) in three columns."""
    grid = Table(box=None, show_header=False, show_edge=False, pad_edge=False,
                 padding=(0, 2, 0, 0), expand=False, style=style)
    grid.add_column(no_wrap=True, overflow="ellipsis", min_width=4)
    grid.add_column(justify="right", no_wrap=True)
    grid.add_column(overflow="fold", ratio=1)
    for row in rows:
        grid.add_row(Text(row["label"], style=style), Text(row["figure"], style=style),
                     Text(row["note"] or "", style=style))
    return grid


def _stacked(rows: list[re.Match], style: Style, label_w: int, figure_w: int) -> Group:
    """Labels and figures still a table, each note on the lines under its row (indented
    under the label): for a pane too narrow for a note column."""
    lines: list[RenderableType] = []
    for row in rows:
        label = row["label"]
        if cell_len(label) > label_w:
            label = label[:label_w - 1] + "…"
        lines.append(Text(f"{label:<{label_w}}  {row['figure']:>{figure_w}}", style=style,
                          no_wrap=True, overflow="ellipsis"))
        if row["note"]:
            lines.append(Padding(Text(row["note"], style=style), (0, 0, 0, 2)))
    return Group(*lines)


def _shape(line: str) -> tuple[int, bool]:
    """(the line's own indent, whether it is a row of a table)."""
    indent = len(line) - len(line.lstrip(" "))
    return indent, bool(_TABLE_ROW.match(line[indent:]))


def _slash_command(item: Item) -> str | None:
    """A call of the slash tool as the command it runs ("/send kid hello"): the model's
    command shows once, as this line, and its output once, as the result."""
    if item.meta.get("name") != "slash" or len(item.text) > FOLD_CHARS:
        return None
    try:
        arguments = json.loads(item.text)
    except ValueError:
        return None
    if not isinstance(arguments, dict) or not isinstance(arguments.get("command"), str):
        return None
    args = arguments.get("args")
    return f"/{arguments['command'].lstrip('/')} {args if isinstance(args, str) else ''}".rstrip()


def _hanging(mark: str, body: Text, p: Palette) -> Table:
    """A call or result shown whole: its lines wrap under their own start, not column 0."""
    grid = Table.grid()
    grid.add_column(width=cell_len(mark), no_wrap=True)
    grid.add_column(ratio=1, overflow="fold")
    grid.add_row(Text(mark, style=p.tool), body)
    return grid


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
                gap: bool = True, palette: Palette = PLAIN, outside: bool = False,
                id_width: int = 0, pair: Item | None = None,
                running: str | None = None) -> Sequence[Strip]:
    """The item's lines at this width, with a blank line after it.

    `outside`: the agent no longer sees this message; it is drawn in the palette's
    `outside` colour. `id_width`: a gutter of that many cells at the left holds a
    message's id (on its first line). `pair`: a tool call's result, or a result's call,
    when it is at hand (a folded call shows how its result ended). `running`: the call
    runs, stopped by that key (its line shows for how long).
    """
    width = max(1, width)
    inner = max(1, width - id_width - (len(OUTSIDE_BAR) if outside else 0))
    tail = [Strip.blank(0)] if gap and item.kind != "tool_call" else []
    body = _body(console, item, inner, expanded, palette, outside, pair, running)
    if outside:  # a bar down its left side: the run shows without colours too
        body = _with_gutter(body, OUTSIDE_BAR, OUTSIDE_BAR, palette.outside_label)
        tail = [Strip([Segment(OUTSIDE_BAR, palette.outside_label)])] if tail else []
    if id_width:
        label = str(item.key) if item.kind in MESSAGE_KINDS and item.key > 0 else ""
        body = _with_gutter(body, label.rjust(id_width - 1) + " ", " " * id_width, palette.id)
        if tail and outside:  # the bar goes on through the gap, after the gutter
            tail = _with_gutter(tail, " " * id_width, " " * id_width, palette.id)
    if isinstance(body, list):
        return body + tail
    return Lines([body, tail])


def _body(console: Console, item: Item, width: int, expanded: bool, p: Palette,
          outside: bool, pair: Item | None = None, running: str | None = None) -> Sequence[Strip]:
    recolour = p.outside if outside else None
    if folds(item) and (expanded or item.kind not in ("tool_call", "tool_result")):
        # (Folded tool entries show one line already.)
        chars, _lines = _size(item)
        if expanded:
            style = recolour or _kind_style(item.kind, p)
            whole = WrappedText(sanitize(_whole_text(item)), width, style)
            head = _note(f"▾ {chars:,} characters, shown whole as plain text · Ctrl+O folds it",
                         width, p.fold)
            return Lines([head, whole])
        shown = _head_item(item)
        strips = _draw(console, _renderable(shown, False, p, width), width, p, recolour)
        hidden = max(0, chars - _size(shown)[0])
        note = _note(f"… {hidden:,} more characters not shown ({chars:,} in all) · Ctrl+O shows all",
                     width, p.fold)
        return strips[: MAX_ITEM_LINES - 1] + note
    return _draw(console, _renderable(item, expanded, p, width, pair, running), width, p,
                 recolour)


def _with_gutter(body: Sequence[Strip], first_text: str, rest_text: str,
                 style: Style) -> Sequence[Strip]:
    """Every line of `body` after a gutter: `first_text` on the first, `rest_text` on the
    others (both as wide)."""
    first, blank = Segment(first_text, style), Segment(rest_text, style)
    width = cell_len(first_text)

    def add(index: int, strip: Strip) -> Strip:
        return Strip([first if index == 0 else blank, *strip], strip.cell_length + width)

    if isinstance(body, list):
        return [add(index, strip) for index, strip in enumerate(body)]
    return Mapped(body, add)


def _draw(console: Console, renderable: RenderableType, width: int, p: Palette = PLAIN,
          recolour: Style | None = None) -> list[Strip]:
    options = console.options.update(width=width, height=None)
    theme = p.markdown_theme
    if theme is None:
        lines = console.render_lines(renderable, options, pad=False)
    else:
        with console.use_theme(theme):
            lines = console.render_lines(renderable, options, pad=False)
    lines = unlink_hidden(lines)
    if recolour is not None:
        colour = Style.from_color(recolour.color)  # the palette's, over the text's own
        lines = [[Segment(text, style + colour if style else colour, control)
                  for text, style, control in line] for line in lines]
    return [Strip(line) for line in lines]


def render_text_lines(console: Console, text: str, width: int) -> list[Strip]:
    """Plain wrapped text (a reply while it streams)."""
    return _draw(console, Text(sanitize(text)), max(1, width))


def render_text(console: Console, text: Text, width: int) -> list[Strip]:
    """Styled text, word-wrapped to the width (the welcome)."""
    return _draw(console, text, max(1, width))


def render_label(text: str, width: int, style: Style) -> list[Strip]:
    """One line of text, cut with an ellipsis to the width (a label, a placeholder)."""
    return _note(text, max(1, width), style)
