"""A tool call's one line in the scrollback: its name, the argument that matters, and how
it ended (tool_summary.py reads them), or, while it runs, for how long and the key that
stops it. The argument is cut so that the rest stays in view."""

from __future__ import annotations

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text

from ikigai_tui.tui.palette import Palette
from ikigai_tui.tui.safe_text import sanitize
from ikigai_tui.tui.tool_summary import key_argument, outcome
from ikigai_tui.tui.transcript import Item


def tool_line(call: Item, result: Item | None, p: Palette, width: int,
              running: str | None = None, now: float = 0.0) -> Text:
    """A call on one line: "▸ bash make test · exit 1 · 40 lines · 2.1K chars", its
    argument cut (with "…") so that how it ended stays in view. `running`: the call runs
    (no result yet), stopped by that key: "▸ bash make test · running 12s · Esc stops"
    (`now`: the time, for how long it has run)."""
    name = sanitize(str(call.meta.get("name", "?")))
    line = Text.assemble(("  ▸ ", p.tool), (name, p.tool + Style(bold=True)))
    argument = sanitize(key_argument(name, call.text))
    if result is None and running is not None:
        since = elapsed(now - float(call.meta.get("at") or now))
        tail = Text(f" · running {since} · {sanitize(running)} stops", style=p.note)
        return _fitted(line, argument, tail, p, width)
    if result is None:
        return _fitted(line, argument, Text(""), p, width)
    return result_line(line, result, name, p, width, argument, after_name=True)


def result_line(line: Text, result: Item, name: str | None, p: Palette, width: int,
                argument: str = "", after_name: bool = False) -> Text:
    """How a call ended, after `line` (its name and argument when `after_name`, else a
    lone result's marker)."""
    status, failed, size = outcome(result, name)
    parts = [(status, p.error if failed else p.note if status == "stopped" else p.tool),
             (size, p.tool)]
    tail = Text(" · ", style=p.tool).join(Text(sanitize(text), style=style)
                                          for text, style in parts if text)
    if (argument or after_name) and tail.plain:  # a call without an argument: "name · ..."
        tail = Text(" · ", style=p.tool) + tail
    return _fitted(line, argument, tail, p, width)


def _fitted(line: Text, argument: str, tail: Text, p: Palette, width: int) -> Text:
    room = width - line.cell_len - tail.cell_len - 1
    if argument:
        if cell_len(argument) > room:  # cut from the end, the tail kept whole
            argument = argument[: max(1, room - 1)] + "…"
        line.append(" " + argument, style=p.tool)
    line.append_text(tail)
    line.no_wrap, line.overflow = True, "ellipsis"  # too narrow still: cut at the edge
    return line


def elapsed(seconds: float) -> str:
    """A running call's time: "12s", "3m 05s", "1h 02m"."""
    whole = max(0, int(seconds))
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m {whole % 60:02d}s"
    return f"{whole // 3600}h {whole % 3600 // 60:02d}m"
