"""The scrollback's loaded range laid out as lines: each item's drawn lines, and between
them the window's rule, the labels of messages out of the agent's context (or, when those
are hidden, one placeholder line per run of them) and, in a new agent, the welcome."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from rich.console import Console
from textual.strip import Strip

from ikigai_tui.tui.fit import fit
from ikigai_tui.tui.palette import Palette
from ikigai_tui.tui.render import MESSAGE_KINDS, render_item, render_label, render_text
from ikigai_tui.tui.transcript import Item
from ikigai_tui.tui.welcome import HIDE_ID, welcome_text
from ikigai_tui.tui.lines import Lines


@dataclass
class Decor:
    """What is drawn between the items."""

    console: Console
    width: int
    palette: Palette
    rule_key: int | None = None
    rule_label: str = ""
    reasons: dict[int, str] = field(default_factory=dict)  # key -> why it is out
    show_outside: bool = True
    keys: Mapping[str, str] = field(default_factory=dict)  # binding id -> key (keymap.key_names)
    welcome: bool = False


def layout(items: Sequence[Item], strips: Sequence[Sequence[Strip]],
           decor: Decor) -> tuple[Lines, list[int]]:
    """The lines of the range, and the line at which each item begins."""
    lines = Lines()
    starts: list[int] = []
    if decor.welcome:
        lines.add(render_text(decor.console, welcome_text(decor.palette, decor.keys), decor.width)
                  + [Strip.blank(0)])
    runs = _hidden_runs(items, decor) if not decor.show_outside else {}
    previous: str | None = None
    for index, (item, block) in enumerate(zip(items, strips)):
        if decor.rule_key is not None and item.key == decor.rule_key:
            lines.add(render_item(decor.console, Item(-1, "rule", decor.rule_label),
                                  decor.width, palette=decor.palette))
        reason = decor.reasons.get(item.key) if item.kind in MESSAGE_KINDS else None
        if reason != previous and reason is not None:
            lines.add(_label(decor, reason, runs.get(index)))
        previous = reason
        starts.append(len(lines))
        if reason is None or decor.show_outside:
            lines.add(block)
    return lines, starts


def _label(decor: Decor, reason: str, hidden: int | None) -> list[Strip]:
    if hidden is None:
        line = fit((f"⊘ {reason} · not in the context", f"⊘ {reason}"), decor.width)
        return render_label(line, decor.width, decor.palette.outside_label)
    count = f"{hidden:,} message{'s' if hidden != 1 else ''}"
    toggle = decor.keys.get(HIDE_ID)
    shows = f" ({toggle} shows them)" if toggle else ""
    start = f"⊘ {count} {reason}"
    line = fit((f"{start} · not in the context, hidden{shows}", f"{start} · hidden{shows}",
                f"{start} · hidden", start), decor.width)  # shortened by words, not cut
    return render_label(line, decor.width, decor.palette.outside_label) + [Strip.blank(0)]


def _hidden_runs(items: Sequence[Item], decor: Decor) -> dict[int, int]:
    """Index of the first item of each run of out-of-context messages with the same
    reason -> how many messages the run holds."""
    runs: dict[int, int] = {}
    first: int | None = None
    previous: str | None = None
    for index, item in enumerate(items):
        reason = decor.reasons.get(item.key) if item.kind in MESSAGE_KINDS else None
        if reason is not None and reason == previous and first is not None:
            runs[first] += 1
        elif reason is not None:
            first = index
            runs[first] = 1
        previous = reason
    return runs
