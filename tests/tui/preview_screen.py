"""What the preview's list shows on screen, read back and compared with its state (used by
tests/tui/test_preview_repaint.py and benchmarks/preview.py).

The rows are read as the compositor draws them from what the list last painted (its line
cache): a line the list forgot to repaint shows there stale, as it does on a terminal.
Nothing here reads the list's own text of a line (`PreviewList.line_text`).
"""

from __future__ import annotations

import re

from textual.app import App

from ikigai_tui.tui.screens.preview import PreviewList

ROW = re.compile(r"▐(.)▌ (?:#(\d+)|exchange #(\d+))")


def screen_rows(app: App, lst: PreviewList) -> list[tuple[str, object]]:
    """Each content row of the list as drawn: (its text, its background colour)."""
    region = lst.scrollable_content_region
    strips = app.screen._compositor.render_strips()
    rows = []
    for y in range(region.y, region.bottom):
        strip = strips[y].crop(region.x, region.right)
        last = list(strip)[-1]
        rows.append((strip.text, last.style.bgcolor if last.style else None))
    return rows


def mismatches(app: App, lst: PreviewList) -> list[str]:
    """Where the screen differs from the state: the lines shown must be the ones at the
    scroll offset, each box ticked iff its item is (a header's: X all of its exchange,
    - some, blank none), the highlight on the cursor's row only and in view."""
    layout = lst.line_map
    top = int(lst.scroll_offset.y)
    rows = screen_rows(app, lst)
    cursor_bg = (lst.rich_style + lst._component("preview-list--cursor")).bgcolor
    highlighted = {top + y for y, (_text, bg) in enumerate(rows) if bg == cursor_bg}
    shown = {top + y for y in range(len(rows)) if top + y < lst.line_count}
    cursor = set(range(*lst.cursor_span()))
    problems = []
    if highlighted != cursor & shown:
        problems.append(f"highlight on lines {sorted(highlighted)}, the cursor on {sorted(cursor)}")
    if cursor and not cursor & shown:
        problems.append(f"the cursor (lines {sorted(cursor)}) is out of view")
    for y, (text, _bg) in enumerate(rows):
        line = top + y
        if line >= lst.line_count:
            if text.strip():
                problems.append(f"row {y}, past the end, shows {text!r}")
            continue
        ref = layout.line_ref[line]
        if ref >= 0 and layout.line_sub[line]:
            if "↳" not in text:
                problems.append(f"row {y} should be #{layout.items[ref].id}'s reason: {text!r}")
            continue
        found = ROW.search(text)
        if not found:
            problems.append(f"row {y} is not a row of the list: {text!r}")
            continue
        box, item_id, exchange = found.groups()
        if ref >= 0:
            item = layout.items[ref]
            ticked = lst.is_checked(item.id)
            if item_id != str(item.id):
                problems.append(f"row {y} shows {text!r}, not #{item.id}")
            elif (box == "X") != ticked:
                problems.append(f"#{item.id} is {'' if ticked else 'not '}ticked, the screen "
                                f"shows {text!r}")
        elif exchange is None or not layout.headers[~ref].startswith(f"exchange #{exchange} "):
            problems.append(f"row {y} should be {layout.headers[~ref]!r}: {text!r}")
        elif box != lst.group_box(~ref):
            problems.append(f"header {text!r}, its exchange's box is {lst.group_box(~ref)!r}")
    return problems
