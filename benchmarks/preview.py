"""The /forget and /remember preview modal with thousands of matches (issue 12).
benchmarks/run.py prints these lines after its own figures.

  preview_open_5000_ms   Opening the preview with 5,000 matches in 1,700 exchanges (each
        with a reason, as the matcher gives them) over a running app at 120x40: from
        constructing the PreviewScreen to the first frame in which its list was drawn
        (compose, mount, layout and that frame). Median of REPS opens, after one
        untimed warm-up. Goal: <= 300 ms.
  preview_key_5000_ms    A keypress in that open preview, scrolled to the middle (the
        cursor on the 2,500th message): from the key event to the end of the action it
        runs and the repaint after it. 65 presses, space / down / header / a / n in turn
        (space toggles one message; header is space on the exchange's header, the cursor
        put there untimed, ticking the whole exchange; a and n tick or untick all 5,000).
        Median; the details give each key's median and the worst. Goal: <= 50 ms. The
        figure counts only if the screen is right: after every press the rows drawn are
        read back from the compositor and compared with the list's state (ticks, the
        exchange's box, the highlight: tests/tui/preview_screen.py); a mismatch is a
        CHECK FAILED line and the figure says miss.

How it is measured. One child process (`python benchmarks/preview.py --child REPS`) runs
a bare Textual app headless (run_test) with nothing on its main screen, so the figures are
the preview's own cost. Since the headless driver skips writing frames to a terminal,
every frame's escape sequences are still generated (as in benchmarks/tui.py), so that
cost is counted. A repaint is forced as soon as the screen is dirty rather than on the
next tick of its update timer, which is not the preview's cost. The child checks what
it drew and what each key did (CHECK FAILED lines otherwise). The items are made up,
seeded: realistic first lines and reasons, 2 to 4 messages an exchange.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import figure

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
perf = time.perf_counter
SIZE = (120, 40)
ITEMS = 5_000
EXCHANGES = 1_700
KEYS = ["space", "down", "header", "a", "n"]  # header: space on the exchange's header
KEY_ROUNDS = 13  # 65 presses
OPEN_GOAL_MS = 300.0
KEY_GOAL_MS = 50.0
ROLES = ["user", "assistant", "tool_call", "tool_result"]


def fmt(name: str, value: float, goal: float, details: str) -> str:
    return figure.fmt(name, f"{value:.1f} ms", f"<= {goal:g} ms", value <= goal, details)


def make_items(seed: int = 12) -> list:
    """ITEMS preview items in EXCHANGES exchanges, ids rising with gaps (the messages that
    did not match), every item with a reason, one in twenty unticked."""
    import gen
    from ikigai_tui.tui.screens.preview import PreviewItem

    rng = random.Random(seed)
    words = gen.vocabulary(rng)
    sizes = [2] * EXCHANGES
    for _ in range(ITEMS - 2 * EXCHANGES):
        while True:
            k = rng.randrange(EXCHANGES)
            if sizes[k] < 4:
                sizes[k] += 1
                break
    items, next_id = [], 1
    for size in sizes:
        next_id += rng.randint(0, 6)
        exchange = next_id
        for k in range(size):
            first = gen.run_of_words(rng, words, 70)
            if rng.random() < 0.3:
                first += "\n" + gen.run_of_words(rng, words, 200)
            items.append(PreviewItem(
                next_id, ROLES[k], first, rng.randint(3, 2_000), checked=rng.random() > 0.05,
                reason="mentions " + gen.run_of_words(rng, words, 50), exchange=exchange))
            next_id += 1
    return items


# -- the child ------------------------------------------------------------------------------


async def _drive(reps: int) -> dict:
    from textual import events
    from textual.app import App

    from ikigai_tui.tui.screens.preview import PreviewList, PreviewScreen
    from tests.tui.preview_screen import mismatches
    from tui_drive import painted

    items = make_items()
    problems: list[str] = []
    state = {"drawn": False, "painted": False}
    display, render_line = App._display, PreviewList.render_line

    def _display(self, screen, renderable) -> None:
        if renderable is not None and hasattr(renderable, "render_segments"):
            renderable.render_segments(self.console)  # what a terminal would be sent
        display(self, screen, renderable)
        if renderable is not None and state["drawn"]:
            state["painted"] = True

    def drawn(self, y: int):
        state["drawn"] = True
        return render_line(self, y)

    App._display, PreviewList.render_line = _display, drawn
    acted = asyncio.Event()
    dispatch = App._dispatch_action

    async def _dispatch_action(self, *args, **kwargs):
        result = await dispatch(self, *args, **kwargs)
        acted.set()
        return result

    App._dispatch_action = _dispatch_action

    async def settle(app, pilot) -> None:
        for _ in range(50):
            await pilot._wait_for_screen()
            if painted(app.screen):
                return

    app = App()
    opens: list[float] = []
    times: dict[str, list[float]] = {key: [] for key in KEYS}
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)

        async def open_preview() -> tuple[float, PreviewScreen]:
            state["drawn"] = state["painted"] = False
            t0 = perf()
            screen = PreviewScreen("Forget: review the messages", items, 3_000_000,
                                   matcher="local (words + meaning)", criteria="database schema")
            await app.push_screen(screen)
            for _ in range(100):
                if state["painted"]:
                    break
                await settle(app, pilot)
                if not state["painted"]:
                    app.screen._on_timer_update()
                    await asyncio.sleep(0)
            elapsed = perf() - t0
            if not state["painted"]:
                problems.append("open: the preview's list was never drawn")
            return elapsed, screen

        for rep in range(reps + 1):
            elapsed, screen = await open_preview()
            if rep:
                opens.append(elapsed)
            if rep < reps:
                screen.dismiss(None)
                await settle(app, pilot)
        lst = screen.preview_list
        if lst.line_count != ITEMS * 2 + EXCHANGES:
            problems.append(f"open: {lst.line_count} lines, expected {ITEMS * 2 + EXCHANGES}")
        if not lst.has_focus:
            problems.append("open: the list does not have the focus")

        async def press(key: str) -> float:
            acted.clear()
            t0 = perf()
            app._driver.send_message(events.Key(key, None))
            await asyncio.wait_for(acted.wait(), 30)
            await settle(app, pilot)
            return perf() - t0

        def check_screen(after: str) -> None:
            problems.extend(f"after {after}, the screen: {text}"
                            for text in mismatches(app, lst)[:3])

        # To the middle, untimed: the rows repainted must be found at the scroll offset.
        # (After the dialog's own fitting of the list to the screen, which scrolls too.)
        for _ in range(3):
            await pilot.pause()
        lst.move_to(ITEMS // 2)
        for _ in range(3):
            await pilot.pause()
        await settle(app, pilot)
        if not 0 < lst.scroll_y < lst.max_scroll_y:
            problems.append(f"not scrolled to the middle: at {lst.scroll_y} of {lst.max_scroll_y}")
        check_screen("scrolling to the middle")

        async def press_key(key: str) -> float:
            """One timed key of KEYS, checked; `header` first puts the cursor on the
            exchange's header (untimed) and times the space there."""
            if key != "header":
                return await press(key)
            layout = lst.line_map
            index = lst.cursor
            lst.move_to_line(layout.header_line[layout.group_of[index]])
            await settle(app, pilot)
            group = lst.cursor_group
            members = [layout.items[i].id for i in layout.group_items[group]]
            whole = all(lst.is_checked(i) for i in members)
            elapsed = await press("space")
            if any(lst.is_checked(i) == whole for i in members):
                problems.append("space on a header did not tick (or untick) its whole exchange")
            lst.move_to(index)  # back to the message, untimed
            await settle(app, pilot)
            return elapsed

        for key in KEYS:  # warm-up, untimed
            await press_key(key)
        for _ in range(KEY_ROUNDS):
            for key in KEYS:
                if lst.cursor is None:  # down landed on a header: to its first message, untimed
                    lst.move_to_line(lst.cursor_line + 1)
                    await settle(app, pilot)
                below, ticked = lst.line_map.row_end(lst.cursor_line), lst.checked_count
                current = lst.current.id
                was = lst.is_checked(current)
                times[key].append(await press_key(key))
                check_screen(key)
                if key == "space" and lst.is_checked(current) == was:
                    problems.append("space did not toggle the message under the cursor")
                if key == "down" and lst.cursor_line != below:
                    problems.append("down did not move the cursor to the next row")
                if key == "a" and lst.checked_count != ITEMS:
                    problems.append("a did not tick every message")
                if key == "n" and lst.checked_count != 0:
                    problems.append(f"n did not untick every message ({ticked} before)")
        totals = screen.query_one("#preview-totals").render().plain
        if not totals.startswith(f"0 of {ITEMS:,} selected"):
            problems.append(f"the totals do not follow the ticks: {totals!r}")
        screen.dismiss(None)
        await settle(app, pilot)
    return {"opens": opens, "times": times, "problems": sorted(set(problems))}


def child(reps: str) -> None:
    sys.path.insert(0, str(HERE))
    sys.path.insert(1, str(REPO))  # the screen check lives in tests/tui/preview_screen.py
    figure.report(asyncio.run(_drive(int(reps))))


# -- the parent -----------------------------------------------------------------------------


def figures(quick: bool = False) -> Iterator[str]:
    reps = 3 if quick else 7
    result, failed = figure.run_child([__file__, "--child", str(reps)])
    if result is None:
        yield f"CHECK FAILED: preview child {failed}"
        return
    opens = [t * 1e3 for t in result["opens"]]
    yield fmt("preview_open_5000_ms", statistics.median(opens), OPEN_GOAL_MS,
              f"{ITEMS:,} matches in {EXCHANGES:,} exchanges at {SIZE[0]}x{SIZE[1]}; median of "
              f"{len(opens)}, min {min(opens):.1f}, max {max(opens):.1f} ms")
    times = {key: [t * 1e3 for t in ts] for key, ts in result["times"].items()}
    every = [t for ts in times.values() for t in ts]
    per_key = ", ".join(f"{key} {statistics.median(ts):.1f}" for key, ts in times.items())
    median = statistics.median(every)
    screen_wrong = any("the screen:" in text for text in result["problems"])
    yield figure.fmt("preview_key_5000_ms", f"{median:.1f} ms", f"<= {KEY_GOAL_MS:g} ms",
                     median <= KEY_GOAL_MS and not screen_wrong,
                     f"scrolled to the middle; median of {len(every)} presses; medians "
                     f"{per_key} ms; worst {max(every):.1f} ms; rows on screen checked after "
                     f"each: {'WRONG, the figure does not count' if screen_wrong else 'right'}")
    for text in result["problems"]:
        yield f"CHECK FAILED: {text}"


if __name__ == "__main__":
    figure.main(figures, child)
