"""Text shortened to a width by whole words: the first of several wordings that fits,
else the last one cut after a word, with "…". Never a word cut in the middle (a line
at 80 columns reads "hidden (F8 shows them)", not "hidden (F8 sh…")."""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len, set_cell_size

__all__ = ["cut", "fit", "fit_parts"]


def cut(text: str, cells: int) -> str:
    """`text` cut to `cells` columns (in a word if need be), with "…" where it was cut."""
    if cells <= 0:
        return ""
    if cell_len(text) <= cells:
        return text
    return set_cell_size(text, cells - 1) + "…"


def fit(wordings: Sequence[str], width: int) -> str:
    """The first of `wordings` (longest first) that fits `width` cells; else the last,
    cut after its last whole word that fits (a single word too long: cut, with "…")."""
    for text in wordings:
        if cell_len(text) <= width:
            return text
    text = wordings[-1]
    words = text.split(" ")
    for count in range(len(words) - 1, 0, -1):
        cut = " ".join(words[:count]).rstrip(" ·,;:(") + "…"
        if cell_len(cut) <= width:
            return cut
    out = ""
    for char in text:  # one word wider than the width: its start
        if cell_len(out + char) >= width:
            break
        out += char
    return out + "…" if width > 0 else ""


def fit_parts(parts: Sequence[str], width: int, drop: Sequence[int] = (), sep: str = " · ") -> str:
    """`parts` joined by `sep`, whole parts dropped until the line fits `width`: those at the
    indexes in `drop` first (in that order), then from the end; never a dangling `sep`.
    Only the first part alone too wide is cut, after a word (fit)."""
    order = [*drop, *(i for i in range(len(parts) - 1, 0, -1) if i not in drop)]
    kept = list(range(len(parts)))
    wordings = [sep.join(parts[i] for i in kept)]
    for index in order:
        kept.remove(index)
        wordings.append(sep.join(parts[i] for i in kept))
    return fit(wordings, width) if parts else ""
