"""What the preview's list shows on screen is its state, scrolled or not (issue 23, item 1).

A property over random key sequences at several sizes: after every key, the rows as the
compositor draws them (preview_screen.py: from what the list last painted, its line cache:
a line the list forgot to repaint shows there stale, as on a terminal) are read back and
compared with the list's state (preview_screen.mismatches: the lines at the scroll
offset, each box ticked iff its item is, a header's box its exchange's, the highlight on
the cursor's row only: the cursor lands on items and on the exchanges' headers).
"""

from __future__ import annotations

import random

import pytest
from textual.app import App

from ikigai_tui.tui.screens.preview import PreviewItem, PreviewList, PreviewScreen

from .harness import Harness
from .preview_screen import mismatches

ROLES = ["user", "assistant", "tool_call", "tool_result"]
KEYS = ["up", "down", "pageup", "pagedown", "home", "end", "space", "space", "a", "n"]
SIZES = [(80, 24), (120, 40), (100, 30)]


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


def check(app: App, lst: PreviewList, what: str) -> None:
    """The property: the screen shows the state."""
    problems = mismatches(app, lst)
    assert not problems, f"{what}: {problems}"


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
    keys = [rng.choice(KEYS) for _ in range(24)]
    await run_keys(size, keys, topics(90, seed))


async def test_resizing_keeps_the_screen_right():
    """A resize changes the list's height (and where the cursor's row is drawn): the rows
    still show the state after it, and keys after it repaint the right rows."""
    screen = PreviewScreen("Forget: review the messages", topics(90), 50_000, criteria="cooking")
    app = Harness(screen)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        lst = screen.preview_list
        await pilot.press(*["pagedown"] * 3, "space", "up", "space")
        await pilot.pause()
        check(app, lst, "scrolled, before resizing")
        for size in [(80, 24), (100, 30), (120, 40)]:
            await pilot.resize_terminal(*size)
            await pilot.pause()
            await pilot.pause()
            check(app, lst, f"resized to {size}")
            for key in ["up", "space", "down", "down", "space"]:
                await pilot.press(key)
                await pilot.pause()
                check(app, lst, f"at {size}, after {key}")


def test_scrolled_preview_after_the_trials_keys(snap_compare):
    """The picture of the trial's keys at 80x24: End, Up, Space, Space (#29 unticked and
    ticked again), Up (onto exchange #29's header), Space (the whole exchange unticked):
    the boxes and the highlight as the state has them, the list scrolled to its end."""
    screen = PreviewScreen("Forget: review the messages", topics(), 50_000, criteria="cooking")

    async def run_before(pilot) -> None:
        await pilot.pause()
        await pilot.press("end", "up", "space", "space", "up", "space")
        await pilot.pause()
        assert not mismatches(pilot.app, screen.preview_list)

    assert snap_compare(Harness(screen), terminal_size=(80, 24), run_before=run_before)
