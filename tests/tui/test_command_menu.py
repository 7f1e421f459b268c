"""The / menu (issue 27 item 8): "/" in the empty input opens the commands' list above
it, filtered as the name is typed; up/down move in it; Tab or Enter complete a partial
name (the usage hint then shows while the arguments are typed); Enter on a whole name
that needs no argument runs it; Esc closes it and keeps the text; closed, it takes no
key (up walks the history). Snapshots at 120x40 and 80x24, and the time of a keypress
with the menu open."""

from __future__ import annotations

import asyncio
import time

from textual import events

from ikigai_tui.tui.widgets.command_menu import CommandMenu, matches, menu_state

from .conftest import SIZE, all_lines, events_of, idle, settle, talked_app, type_text


def _menu(app) -> CommandMenu:
    return app.query_one(CommandMenu)


def _names(app) -> list[str]:
    return [s.name for s in _menu(app).state.specs]


def test_matches_prefix_first_then_substring_then_letters_in_order():
    assert [s.name for s in matches("mark")] == ["mark", "marks"]
    names = [s.name for s in matches("re")]
    prefix = [n for n in names if n.startswith("re")]
    assert names[:len(prefix)] == prefix and {"rewind", "remember", "recall", "restore",
                                              "retry", "rename"} <= set(prefix)
    assert "undo" not in names and names.index("forget") > names.index("rewind")  # (fo-RE-get)
    assert [s.name for s in matches("ckml")] == ["check-mail"]  # its letters, in order
    assert menu_state("/send kid hi").hint.name == "send"
    assert menu_state("//not a command").specs == [] and menu_state("/x\ny").specs == []


async def test_menu_opens_filters_moves_and_completes(bench):
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert not app.query(CommandMenu)  # made when first opened
        await pilot.press("slash")
        await pilot.pause()
        menu = _menu(app)
        assert menu.is_open and menu.region.height > 0
        assert menu.region.bottom <= app.prompt_input.region.y  # above the input
        assert len(_names(app)) > 20
        await type_text(pilot, "ma")
        await pilot.pause()
        assert _names(app) == ["mark", "marks", "mail", "check-mail", "compact"]
        assert menu.chosen.name == "mark"
        await pilot.press("down")
        assert menu.chosen.name == "marks"
        await pilot.press("down", "down", "down", "down")  # wraps round
        assert menu.chosen.name == "mark"
        await pilot.press("up", "up")
        assert menu.chosen.name == "check-mail"
        assert app.prompt_input.text == "/ma"  # up / down moved in the menu only
        await pilot.press("tab")  # no argument: the whole name, ready to run
        await pilot.pause()
        assert app.prompt_input.text == "/check-mail"
        assert _names(app) == ["check-mail"]


async def test_tab_and_enter_on_a_partial_name_leave_the_usage_hint(bench):
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await type_text(pilot, "/fo")
        await pilot.press("enter")  # a partial name is completed, never sent
        await pilot.pause()
        assert app.prompt_input.text == "/forget "
        menu = _menu(app)
        assert menu.is_open and menu.state.hint.name == "forget" and not menu.listing
        rendered = str(menu.render())
        assert "/forget [--dry-run]" in rendered and "Remove the messages" in rendered
        await type_text(pilot, "--ids 3")
        await pilot.pause()
        assert menu.state.hint.name == "forget"  # the hint stays while arguments are typed
        await pilot.press("ctrl+u")
        await type_text(pilot, "/sen")
        await pilot.press("tab")
        await pilot.pause()
        assert app.prompt_input.text == "/send "
        assert menu.state.hint.usage == "/send AGENT MESSAGE"
        await pilot.press("ctrl+u")
        await type_text(pilot, "/pin")  # a whole name that needs its argument: completed
        await pilot.press("enter")
        await pilot.pause()
        assert app.prompt_input.text == "/pin "


async def test_enter_on_a_whole_command_runs_it(bench):
    app = await talked_app(bench)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        root = app.focused_agent
        await type_text(pilot, "/clear")
        await pilot.press("enter")
        await idle(pilot)
        assert app.prompt_input.text == ""
        assert not _menu(app).is_open
        assert [e.payload["text"] for e in await events_of(app, root, "command")] == ["/clear"]
        assert await app.session.messages(root) == []


async def test_esc_closes_and_keeps_the_text_and_a_closed_menu_takes_no_key(bench):
    app = await talked_app(bench)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await type_text(pilot, "/ma")
        await pilot.press("escape")
        await pilot.pause()
        menu = _menu(app)
        assert not menu.is_open and app.prompt_input.text == "/ma"
        await pilot.press("ctrl+u")
        await pilot.press("up")  # closed: the history, not the menu
        await pilot.pause()
        assert app.prompt_input.text == "Parent talk."
        assert not menu.is_open
        await pilot.press("ctrl+u")
        await type_text(pilot, "x/y")  # a / that does not start the input opens nothing
        await pilot.pause()
        assert not menu.is_open
        await pilot.press("ctrl+u")
        await type_text(pilot, "/zzqq")  # nothing matches: nothing shown, nothing taken
        await pilot.press("tab")
        await pilot.pause()
        assert not menu.is_open and app.prompt_input.text == "/zzqq"
        assert "Parent talk." in " ".join(all_lines(app.panes.active.scrollback))


async def test_a_keypress_with_the_menu_open_is_quick(bench):
    """The figures the report gives: from a key event (sent as the terminal's driver
    sends it) to the input repainted with the new text, with the menu closed and open (the
    menu is drawn in the same frame), and the menu's own work for a key (its filtering
    and drawing), which must stay far under a frame."""
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        prompt = app.prompt_input
        drawn = asyncio.Event()
        paint = prompt.render_lines

        def painting(crop):
            drawn.set()
            return paint(crop)

        prompt.render_lines = painting

        async def typing() -> list[float]:
            times = []
            for _ in range(20):
                for key, char in (("e", "e"), ("backspace", None)):
                    await pilot.pause()
                    drawn.clear()
                    start = time.perf_counter()
                    app._driver.send_message(events.Key(key, char))
                    await asyncio.wait_for(drawn.wait(), 5)
                    times.append(time.perf_counter() - start)
            return sorted(times)

        await type_text(pilot, "x")
        closed = await typing()
        await pilot.press("ctrl+u", "slash")
        await pilot.pause()
        menu = _menu(app)
        opened = await typing()
        assert menu.is_open and prompt.text == "/"
        work = []
        for text in ("/r", "/re", "/r", "/", "/co", "/c") * 20:
            start = time.perf_counter()
            menu.follow(text)
            menu.render()
            work.append(time.perf_counter() - start)
        own_ms = sorted(work)[len(work) // 2] * 1000
        open_ms, closed_ms = opened[len(opened) // 2] * 1000, closed[len(closed) // 2] * 1000
        print(f"\nkey event to the input repainted: median {open_ms:.1f} ms with the / menu "
              f"open (max {opened[-1] * 1000:.1f}), {closed_ms:.1f} ms closed (max "
              f"{closed[-1] * 1000:.1f}); the menu's own work: median {own_ms:.3f} ms")
        assert own_ms < 2, work
        assert open_ms < 50, opened


def _open_on(text: str):
    async def run_before(pilot):
        await settle(pilot)
        await type_text(pilot, text)
        await pilot.pause()
    return run_before


def test_menu_snapshot_120x40(bench, snap_compare):
    assert snap_compare(bench.app(), terminal_size=SIZE, run_before=_open_on("/"))


def test_menu_snapshot_80x24(bench, snap_compare):
    """At 80x24 the list is shorter (6 and its "more" line), and all of it shows."""
    app = bench.app()

    async def run_before(pilot):
        await _open_on("/re")(pilot)
        menu = _menu(app)
        lines = str(menu.render()).splitlines()
        assert len(lines) == 7 and "more" in lines[-1]
        assert menu.region.height == 7  # none of it cut by the panes above

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def test_menu_hint_snapshot_80x24(bench, snap_compare):
    assert snap_compare(bench.app(), terminal_size=(80, 24), run_before=_open_on("/send ki"))
