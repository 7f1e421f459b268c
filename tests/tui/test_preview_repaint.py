"""What the preview's list shows on screen is its state, scrolled or not (issue 23, item 1).

A property over random key sequences at several sizes: after every key, the rows as the
compositor draws them (from what the list last painted, its line cache: a line the list
forgot to repaint shows there stale, as on a terminal) are read back and compared with the
list's state: the lines shown are the ones at the scroll offset, each row's box is ticked
iff its item is ticked (a header's: X all of its exchange, - some, blank none), and the
highlight is on the cursor's row only (an item's or a header's: the cursor lands on both). Nothing here reads the list's own text of a line (`line_text`).
"""

from __future__ import annotations

import random
import re

import pytest
from textual.app import App
from textual.screen import Screen

from ikigai_tui.tui.screens.preview import PreviewItem, PreviewList, PreviewScreen

ROLES = ["user", "assistant", "tool_call", "tool_result"]
KEYS = ["up", "down", "pageup", "pagedown", "home", "end", "space", "space", "a", "n"]
SIZES = [(80, 24), (120, 40), (100, 30)]
ROW = re.compile(r"▐(.)▌ (?:#(\d+)|exchange #(\d+))")


class Harness(App[None]):
    def __init__(self, under_test: Screen) -> None:
        super().__init__()
        self.under_test = under_test
        self.results: list[object] = []

    def on_mount(self) -> None:
        self.push_screen(self.under_test, self.results.append)


def topics(count: int = 30, seed: int = 7) -> list[PreviewItem]:
    """`count` messages of a conversation, 2 or 3 to an exchange, some with a reason."""
    rng = random.Random(seed)
    items, exchange = [], None
    for i in range(1, count + 1):
        role = "user" if exchange is None or rng.random() < 0.4 else rng.choice(ROLES[1:])
        if role == "user":
            exchange = i
        items.append(PreviewItem(i, role, f"message {i} about cooking", rng.randint(5, 900),
                                 checked=rng.random() > 0.2,
                                 reason=f"mentions cooking ({i})" if rng.random() < 0.6 else None,
                                 exchange=exchange))
    return items


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


def cursor_lines(lst: PreviewList) -> set[int]:
    """The lines of the list that the cursor is on (its row and its reason)."""
    return set(range(*lst.cursor_span()))


def check(app: App, lst: PreviewList, what: str) -> None:
    """The property: the screen shows the state."""
    layout = lst.line_map
    top = int(lst.scroll_offset.y)
    rows = screen_rows(app, lst)
    cursor_bg = (lst.rich_style + lst._component("preview-list--cursor")).bgcolor
    highlighted = {top + y for y, (_text, bg) in enumerate(rows) if bg == cursor_bg}
    shown_lines = {top + y for y in range(len(rows)) if top + y < lst.line_count}
    assert highlighted == cursor_lines(lst) & shown_lines, f"{what}: highlight {highlighted}"
    assert cursor_lines(lst) & shown_lines, f"{what}: the cursor is out of view"
    for y, (text, _bg) in enumerate(rows):
        line = top + y
        if line >= lst.line_count:
            assert not text.strip(), f"{what}: row {y} past the end shows {text!r}"
            continue
        ref = layout.line_ref[line]
        if ref >= 0 and layout.line_sub[line]:
            assert "↳" in text, f"{what}: row {y} should be #{layout.items[ref].id}'s reason"
            continue
        found = ROW.search(text)
        assert found, f"{what}: row {y} is not a row of the list: {text!r}"
        box, item_id, exchange = found.groups()
        if ref >= 0:
            item = layout.items[ref]
            assert item_id == str(item.id), f"{what}: row {y} shows {text!r}, not #{item.id}"
            assert (box == "X") == lst.is_checked(item.id), (
                f"{what}: #{item.id} is {'' if lst.is_checked(item.id) else 'not '}ticked, "
                f"the screen shows {text!r}")
        else:
            group = ~ref
            assert exchange is not None, f"{what}: row {y} should be a header: {text!r}"
            assert layout.headers[group].startswith(f"exchange #{exchange} "), text
            assert box == lst.group_box(group), f"{what}: header {text!r} vs {lst.group_box(group)!r}"


async def run_keys(size: tuple[int, int], keys: list[str], items: list[PreviewItem]) -> None:
    screen = PreviewScreen("Forget: review the messages", items, 50_000, criteria="cooking")
    app = Harness(screen)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        lst = screen.preview_list
        check(app, lst, "opened")
        for n, key in enumerate(keys):
            await pilot.press(key)
            await pilot.pause()
            check(app, lst, f"{size} after {keys[:n + 1]}")
        shown = lst.checked_ids  # what the screen showed, as checked above
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.results == ([shown] if shown else [])  # applied: exactly the ticks shown


async def test_the_trials_keys_at_80x24():
    """/forget cooking, End, Up, Space, Space, Up, Space: the ticks and the highlight
    shown are the state's (the trial saw #28 unticked and #26 ticked, the opposite)."""
    await run_keys((80, 24), ["end", "up", "space", "space", "up", "space"], topics())


async def test_thirty_downs_and_back_at_120x40_move_the_highlight():
    """The trial saw the highlight stay put once the list had scrolled: every Down and
    Up moves it, the Ups within the view (no scrolling to repaint everything) too."""
    await run_keys((120, 40), ["down"] * 30 + ["up"] * 12, topics())


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("seed", [1, 2])
async def test_random_keys_show_the_state(size, seed):
    rng = random.Random(seed * 1000 + size[0])
    keys = [rng.choice(KEYS) for _ in range(40)]
    await run_keys(size, keys, topics(90, seed))
