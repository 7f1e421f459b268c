"""Keys named one way (issue 23, item 8) and the footer, placeholder, toasts and key panel
at small sizes (item 11): the welcome, the footer, F1 and the palette's key panel say a
key as it is pressed ("Ctrl+T", "Esc", "PgUp"), never as Textual spells it ("^t",
"escape", "ctrl+t"); what does not fit is shortened by whole words, never cut."""

from __future__ import annotations

import re

import pytest
from rich.cells import cell_len

from ikigai_tui.tui.keymap import APP_BINDINGS, key_name, keys_of
from ikigai_tui.tui.screens.help import HelpKeys, HelpScreen
from ikigai_tui.tui.widgets.keybar import KeyBar

from .conftest import SIZE, idle, settle, type_text

# Keys as Textual or a keymap spells them: "^t", "ctrl+t", "escape", "pageup", "f1", "⏎".
TEXTUAL_SPELLING = re.compile(
    r"\^\w|\b(?:ctrl|alt|shift|escape|esc|pageup|pagedown|pgup|pgdn|enter|tab)\b"
    r"|(?<![\w$])f\d{1,2}\b|[⏎⌫⌦⇥]")


def screen_text(app) -> str:
    """What the screen shows now, line by line (all layers, dialogs included)."""
    lines = app.screen._compositor.render_strips()
    return "\n".join("".join(segment.text for segment in line) for line in lines)


def misnamed(text: str) -> list[str]:
    return sorted({m.group(0) for m in TEXTUAL_SPELLING.finditer(text)})


async def test_the_welcome_the_footer_help_and_the_key_panel_name_keys_as_pressed(bench):
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        main = screen_text(app)
        welcome, footer = main.splitlines()[2:-1], main.splitlines()[-1]
        assert "Ctrl+T agents" in "\n".join(welcome) and "Esc stop a reply" in "\n".join(welcome)
        assert " Enter Send" in footer and " Ctrl+T Agents" in footer
        assert footer.rstrip().endswith("Ctrl+P palette")
        assert misnamed(main) == []

        await pilot.press("f1")
        await idle(pilot)
        assert isinstance(app.screen, HelpScreen)
        help_text = screen_text(app)
        for key in ("Enter", "Ctrl+J", "Ctrl+P", "Up / Down", "Tab", "Ctrl+C", "Esc", "F1"):
            assert re.search(rf"│\s+{re.escape(key)}\s", help_text), key
        assert "Esc · Q · F1  close" in help_text and "PgUp PgDn  scroll" in help_text
        assert misnamed(help_text) == []
        await pilot.press("escape")
        await idle(pilot)

        await pilot.press("ctrl+p")
        await idle(pilot)
        await type_text(pilot, "Keys")
        await idle(pilot)
        await pilot.press("enter")
        await idle(pilot)
        assert app.screen.query("HelpPanel")
        panel = await _whole_panel(app, pilot)
        for key in ("Up", "PgUp", "Ctrl+PgDn", "Ctrl+A", "Backspace"):
            assert re.search(rf"\s{re.escape(key)} ", panel), key
        assert misnamed(panel) == []


async def _whole_panel(app, pilot) -> str:
    """The key panel's text, read a screenful at a time (it scrolls: one key more in the
    app's table pushes the input's last keys below its end)."""
    panel = app.screen.query_one("KeyPanel")
    texts = []
    for y in range(0, panel.max_scroll_y + panel.size.height, max(1, panel.size.height)):
        panel.scroll_to(y=y, animate=False)
        await pilot.pause()
        texts.append(screen_text(app))
    panel.scroll_home(animate=False)
    return "\n".join(texts)


async def test_help_lists_every_key_first(bench):
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("f1")
        await idle(pilot)
        body = app.screen.query_one("#help-body")
        sections = [str(w.render()) for w in body.query(".section")]
        assert sections[0] == "Keys"
        rows = app.screen.query_one(HelpKeys)._key_rows
        keys = [key for key, _ in rows]
        assert keys[:2] == ["Enter", "Ctrl+J"]
        for binding in APP_BINDINGS:  # every binding, shown in the footer or not
            assert any(key_name(keys_of(binding.key)[0]) in k.split(" / ") for k in keys)
        says = dict(rows)
        assert "history" in says["Up / Down"] and "queued" in says["Up / Down"]
        assert "complete" in says["Tab"].lower() and "copy" in says["Ctrl+C"].lower()
        assert "queued" in says["Esc"] and "palette" in says["Ctrl+P"]


async def test_esc_closes_the_palettes_key_panel(bench):
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.action_show_help_panel()
        await idle(pilot)
        assert app.screen.query("HelpPanel")
        await pilot.press("escape")
        await idle(pilot)
        assert not app.screen.query("HelpPanel")
        assert app.focused is app.prompt_input


@pytest.mark.parametrize("width", [120, 80, 60])
async def test_the_footer_drops_whole_keys_and_keeps_the_palettes(bench, width):
    app = bench.app()
    async with app.run_test(size=(width, 24)) as pilot:
        await settle(pilot)
        footer = screen_text(app).splitlines()[-1]
        bar = app.query_one(KeyBar)
        entries = [(display, description) for _, display, description, _ in bar.entries()]
        assert footer.rstrip().endswith(" ".join(entries[-1]))
        shown = re.sub(r"\s+", " ", footer[:footer.rindex(entries[-1][0])]).strip()
        expected = ""
        for display, description in entries[:-1]:  # a prefix of the keys, each whole
            longer = f"{expected} {display} {description}".strip()
            if not shown.startswith(longer):
                break
            expected = longer
        assert shown == expected
        assert expected.startswith("Enter Send Ctrl+J New line")


@pytest.mark.parametrize("size", [(120, 40), (80, 24), (60, 20)])
async def test_the_placeholder_is_shortened_to_its_width_not_cut(bench, size):
    app = bench.app()
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        prompt = app.prompt_input
        placeholder = str(prompt.placeholder)
        assert cell_len(placeholder) <= prompt.content_size.width
        assert placeholder.startswith("Message")
        row = screen_text(app).splitlines()[prompt.content_region.y]
        assert placeholder in row
        if size[0] >= 100:
            assert placeholder == "Message, or / for commands (Enter sends, Ctrl+J new line)"


async def test_the_placeholder_names_the_keys_of_the_keymap(bench):
    (bench.tmp_path / "no-config.toml").write_text('[keymap]\nsend = "ctrl+s"\n', encoding="utf-8")
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert str(app.prompt_input.placeholder) == (
            "Message, or / for commands (Ctrl+S sends, Ctrl+J new line)")


@pytest.mark.parametrize("lines", [0, 4])
async def test_toasts_stay_above_the_input(bench, lines):
    app = bench.app()
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settle(pilot)
        for _ in range(lines):
            await pilot.press("ctrl+j")
        await idle(pilot)
        app.notify("A toast long enough to wrap over two or three lines of the rack " * 2)
        await idle(pilot)
        toast = app.screen.query_one("Toast")
        prompt = app.prompt_input.region
        assert toast.region.bottom <= prompt.y
        assert toast.region.height >= 3


def _bar(app) -> list[tuple[str, str]]:
    return [(display, description) for _, display, description, _ in app.screen.query_one(KeyBar).entries()]


async def test_the_tree_focused_footer_says_what_esc_and_enter_do_there(bench):
    """Issue 23 review, item 2: with the tree focused the footer said `Esc Stop reply` (Esc
    goes back to the input there) and did not show Enter (focus the agent)."""
    app = bench.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert ("Esc", "Stop reply") in _bar(app)  # in the input, Esc does stop the reply
        await pilot.press("ctrl+t")
        await idle(pilot)
        assert app.focused is app.agent_tree
        bar = _bar(app)
        assert ("Esc", "Back to the input") in bar and ("Enter", "Focus agent") in bar, bar
        assert "Stop reply" not in dict(bar).values()
        await pilot.press("escape")
        await idle(pilot)
        assert app.focused is app.prompt_input


async def test_dialogs_name_keys_as_the_footer_does(bench):
    """Issue 23 review, item 2: `n/esc No` in the confirmation, `esc: back to the list` on
    the message view, `a all · n none · v view` in the preview's hint under a footer
    saying `A Select all`; /recall's footer `Ctrl+S Apply` beside a `Restore` button."""
    from textual.widgets import Button

    from ikigai_tui.tui.screens.confirm import ConfirmScreen
    from ikigai_tui.tui.screens.message_view import MessageScreen
    from ikigai_tui.tui.screens.preview import PreviewItem, PreviewScreen
    from ikigai_tui.tui.widgets.fitted import FittedParts

    items = [PreviewItem(i, "user", f"message {i}", 10, True) for i in (1, 2, 3)]
    app = bench.app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.push_screen(ConfirmScreen("Discard the edited summary?"))
        await idle(pilot)
        assert ("Y", "Yes") in _bar(app) and ("N/Esc", "No") in _bar(app), _bar(app)
        labels = [str(b.label) for b in app.screen.query(Button)]
        assert labels == ["Yes (Y)", "No (N)"], labels
        app.pop_screen()

        app.push_screen(PreviewScreen("Recall", items, 100, mode="restore", apply_label="Restore"))
        await idle(pilot)
        bar = _bar(app)
        assert ("Ctrl+S", "Restore") in bar and "Apply" not in dict(bar).values(), bar
        hint = app.screen.query_one(".hint", FittedParts).render().plain
        assert hint == "Space toggle · A all · N none · V view · Enter restore · Esc cancel"
        shown = {display for display, _ in bar}
        assert {part.split(" ")[0] for part in hint.split(" · ")} - {"Enter"} <= shown, bar
        assert not misnamed(screen_text(app))

        app.push_screen(MessageScreen(items[0]))
        await idle(pilot)
        assert app.screen.query_one(".dialog").border_subtitle == "Esc back to the list"
        assert ("Esc", "Back to the list") in _bar(app)


@pytest.mark.parametrize("width", [120, 80, 60])
async def test_the_preview_hint_drops_whole_keys_never_cuts_one(bench, width):
    """Issue 23 review, item 8: at 80 columns the hint read `… · v view · Ente…`. Whole
    parts go (view, none, all: the footer has them); toggle, apply and cancel stay."""
    from ikigai_tui.tui.screens.preview import PreviewItem, PreviewScreen
    from ikigai_tui.tui.widgets.fitted import FittedParts

    full = "Space toggle · A all · N none · V view · Enter apply · Esc cancel".split(" · ")
    app = bench.app()
    async with app.run_test(size=(width, 24)) as pilot:
        await settle(pilot)
        app.push_screen(PreviewScreen("Forget", [PreviewItem(1, "user", "hi", 5, True)], 100))
        await idle(pilot)
        widget = app.screen.query_one(".hint", FittedParts)
        hint = widget.render().plain
        assert "…" not in hint and cell_len(hint) <= widget.content_size.width, hint
        parts = hint.split(" · ")
        assert set(parts) <= set(full) and parts == [p for p in full if p in parts], hint
        if width >= 80:  # narrower, the buttons beside it (Apply, Cancel) say the rest
            assert {"Space toggle", "Enter apply", "Esc cancel"} <= set(parts), hint
        if width >= 120:
            assert parts == full
        row = screen_text(app).splitlines()[widget.region.y]
        assert hint in row  # drawn whole
