"""The help and preview modal screens, and `sanitize`."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from rich.text import Text
from textual.widgets import Static

from ikigai_tui.tui.safe_text import C1_PLACEHOLDER, plain, sanitize
from ikigai_tui.tui.screens.help import HelpCommands, HelpKeys, HelpScreen
from ikigai_tui.tui.screens.preview import PreviewItem, PreviewList, PreviewScreen

from .harness import Harness

SIZE = (120, 40)

COMMANDS = [
    ("/clear [MARK]", "Empty the context, or rewind to MARK", True),
    ("/fork [MARK] [--model M] [--name N] [PROMPT]", "Create a child agent", True),
    ("/undo", "Undo the latest clear, rewind, filter or compact", False),
    ("/evil", "\x1b[31mred\x1b[0m [bold]not markup[/bold]", False),
]
BINDINGS = [("ctrl+p", "Command palette"), ("f1", "Help")]

# Deliberately not sorted by id: the result must be.
ITEMS = [
    PreviewItem(30, "assistant", "Lisbon is mild in November", 400),
    PreviewItem(12, "user", "What is the weather in Lisbon?", 20),
    PreviewItem(44, "tool_result", '{"t": 17}\nsecond line', 1000, checked=False),
]
BEFORE = 5000


def rendered(widget: Static) -> str:
    """The plain text a Static shows."""
    return widget.render().plain


def totals(screen: PreviewScreen) -> str:
    return rendered(screen.query_one("#preview-totals", Static))


def notice_shown(screen: PreviewScreen) -> bool:
    notice = screen.query_one("#preview-notice", Static)
    return notice.display and bool(rendered(notice))


def preview(**kwargs) -> PreviewScreen:
    return PreviewScreen("Forget: the weather", ITEMS, BEFORE, **kwargs)


# ---- sanitize ----


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b", "\u241b"),
        ("\x1b]52;c;ZXZpbA==\x07", "\u241b]52;c;ZXZpbA==\u2407"),  # OSC 52: write the clipboard
        ("ding\x07", "ding\u2407"),
        ("\x1b[2J\x1b[H\x1b[10A", "\u241b[2J\u241b[H\u241b[10A"),  # clear, home, cursor up
        ("\x9b2J", C1_PLACEHOLDER + "2J"),  # single-byte CSI
        ("\x9d0;title\x9c", C1_PLACEHOLDER + "0;title" + C1_PLACEHOLDER),
        ("over\rwrite", "over\u240dwrite"),
        ("rub\x7fout", "rub\u2421out"),
        ("nul\x00", "nul\u2400"),
    ],
)
def test_sanitize_makes_control_sequences_inert(raw, shown):
    assert sanitize(raw) == shown


def test_sanitize_keeps_newline_tab_and_ordinary_text():
    text = "line one\n\tindented — café ✓ 日本 [bold]x[/bold]\u00a0"
    assert sanitize(text) == text


def test_sanitize_leaves_no_control_character():
    everything = "".join(chr(code) for code in range(0xA0))
    out = sanitize(everything)
    controls = [ch for ch in out if ord(ch) < 0x20 and ch not in "\n\t" or 0x7F <= ord(ch) <= 0x9F]
    assert controls == []
    assert len(out) == len(everything)


def test_plain_is_sanitized_and_never_markup():
    text = plain("[bold red]hi[/bold red]\x1b[0m")
    assert isinstance(text, Text)
    assert text.plain == "[bold red]hi[/bold red]\u241b[0m"
    assert text.spans == []


# ---- help ----


@pytest.mark.parametrize("key", ["escape", "q", "f1"])
async def test_help_opens_and_closes(key):
    app = Harness(HelpScreen(COMMANDS, BINDINGS))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press(key)
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen)
        assert app.results == [None]


async def test_help_shows_commands_keys_and_context_as_plain_text():
    app = Harness(HelpScreen(COMMANDS, BINDINGS))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        console = Console(file=io.StringIO(), width=100, color_system=None)
        console.print(app.screen.query_one(HelpCommands).render())
        console.print(app.screen.query_one(HelpKeys).render())
        out = console.file.getvalue()
        assert "/fork [MARK] [--model M] [--name N] [PROMPT]" in out
        assert "\u241b[31mred\u241b[0m [bold]not markup[/bold]" in out
        assert "\x1b" not in out
        assert out.count("●") == 2  # the two LLM-callable commands
        assert "ctrl+p" in out and "Command palette" in out
        paragraphs = " ".join(rendered(p) for p in app.screen.query(".paragraph").results(Static))
        assert "window" in paragraphs and "/mark" in paragraphs and "/fork" in paragraphs


async def test_help_lists_the_find_bars_own_keys():
    """The find bar takes its keys in its input (not bindings the main list shows): Help
    lists them in a section of their own, each key the bar acts on."""
    from ikigai_tui.tui.find_bar import MOVES

    app = Harness(HelpScreen(COMMANDS, BINDINGS))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        console = Console(file=io.StringIO(), width=100, color_system=None)
        console.print(app.screen.query_one("#help-find-keys", HelpKeys).render())
        out = console.file.getvalue()
        sections = [rendered(s) for s in app.screen.query(".section").results(Static)]
        assert "Keys in the find bar" in sections
        named = {"enter": "Enter", "down": "Down", "up": "Up", "escape": "Esc"}
        assert all(named[key] in out for key in MOVES), out
        assert "next hit" in out and "previous hit" in out and "Close the find bar" in out


@pytest.mark.parametrize("keymap,shown", [
    ({}, "Esc · Q · F1"),
    ({"help-close": "ctrl+x,pagedown"}, "Ctrl+X · PgDn"),
    ({"help": "f10"}, "Esc · Q · F1"),  # another binding's keys change nothing here
])
async def test_help_names_its_close_keys_as_the_welcome_does(keymap, shown):
    """Human key names (keymap.key_name), not the keymap's strings ("ctrl+x,pagedown")."""
    app = Harness(HelpScreen(COMMANDS, BINDINGS))
    app.keymap = keymap
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        hint = rendered(app.screen.query_one(".hint"))
        assert hint.startswith(f"{shown}  close"), hint


async def test_help_scrolls_from_the_keyboard():
    app = Harness(HelpScreen(COMMANDS * 10, BINDINGS))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        body = app.screen.query_one("#help-body")
        assert body.has_focus
        await pilot.press("pagedown")
        await pilot.pause()
        assert body.scroll_y > 0


# ---- preview ----


async def test_preview_initial_totals_and_rows():
    app = Harness(preview())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, PreviewScreen)
        assert totals(screen) == "2 of 3 selected · removes 420 tokens · context: 5,000 → 4,580 tokens"
        items = screen.query_one(PreviewList)
        boxes = [items.line_text(i)[:4] for i in range(3)]
        assert sorted(boxes) == ["▐ ▌ ", "▐X▌ ", "▐X▌ "]  # 2 of 3 ticked: X, or empty
        prompts = [items.line_text(i)[4:] for i in range(3)]
        assert items.line_count == 3  # no exchanges, no reasons: one line an item
        assert prompts[0].split() == ["#30", "assistant", "400", "Lisbon", "is", "mild", "in", "November"]
        assert prompts[2].split()[:4] == ["#44", "tool_result", "1,000", '{"t":']
        assert "second line" not in prompts[2]
        assert not notice_shown(screen)


async def test_space_toggles_and_updates_totals():
    app = Harness(preview())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        await pilot.press("space")  # unticks #30, the highlighted first row
        await pilot.pause()
        assert totals(screen) == "1 of 3 selected · removes 20 tokens · context: 5,000 → 4,980 tokens"
        await pilot.press("down", "down", "space")  # ticks #44
        await pilot.pause()
        assert totals(screen) == "2 of 3 selected · removes 1,020 tokens · context: 5,000 → 3,980 tokens"
        await pilot.press("a")
        await pilot.pause()
        assert totals(screen).startswith("3 of 3 selected · removes 1,420 tokens")
        await pilot.press("n")
        await pilot.pause()
        assert totals(screen) == "0 of 3 selected · removes 0 tokens · context: 5,000 → 5,000 tokens"


async def test_nothing_selected_shows_notice_and_stays():
    app = Harness(preview())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        await pilot.press("n", "enter")
        await pilot.pause()
        assert app.screen is screen
        assert app.results == []
        assert notice_shown(screen)
        assert "Nothing would be removed" in rendered(screen.query_one("#preview-notice", Static))
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.screen is screen and app.results == []
        await pilot.press("space")  # a change hides the notice
        await pilot.pause()
        assert not notice_shown(screen)


async def test_enter_applies_with_sorted_checked_ids():
    app = Harness(preview())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert not isinstance(app.screen, PreviewScreen)
        assert app.results == [[12, 30]]


async def test_ctrl_s_applies_after_toggling():
    app = Harness(preview())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("down", "down", "space", "ctrl+s")
        await pilot.pause()
        assert app.results == [[12, 30, 44]]


async def test_escape_cancels():
    app = Harness(preview())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("space", "escape")
        await pilot.pause()
        assert not isinstance(app.screen, PreviewScreen)
        assert app.results == [None]


async def test_buttons_work_with_the_mouse():
    app = Harness(preview(apply_label="Forget"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert "Forget" in str(app.screen.query_one("#preview-apply").label)
        assert await pilot.click("#preview-apply")
        await pilot.pause()
        assert app.results == [[12, 30]]
    app = Harness(preview())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert await pilot.click("#preview-cancel")
        await pilot.pause()
        assert app.results == [None]


async def test_keep_mode_removes_the_unchecked():
    app = Harness(preview(mode="keep"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        # #30 and #12 stay; #44 (1,000 tokens) leaves.
        assert totals(screen) == ("2 of 3 selected to stay · 1 message (1,000 tokens) leave"
                                  " · context: 5,000 → 4,000 tokens")
        await pilot.press("a")
        await pilot.pause()
        assert totals(screen) == ("3 of 3 selected to stay · 0 messages (0 tokens) leave"
                                  " · context: 5,000 → 5,000 tokens")
        await pilot.press("enter")  # keeping everything removes nothing
        await pilot.pause()
        assert app.screen is screen and notice_shown(screen)
        await pilot.press("space")  # untick #30: it would leave
        await pilot.pause()
        assert totals(screen) == ("2 of 3 selected to stay · 1 message (400 tokens) leave"
                                  " · context: 5,000 → 4,600 tokens")
        await pilot.press("enter")
        await pilot.pause()
        assert app.results == [[12, 44]]


async def test_untrusted_text_is_shown_inert():
    items = [PreviewItem(1, "user\x1b[2J", "\x1b]52;c;ZXZpbA==\x07 [red]hi[/red] \x9b2J", 5)]
    screen = PreviewScreen("Forget \x1b[H[b]x[/b]", items, 10, note="note \x07[i]n[/i]")
    app = Harness(screen)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        prompt = screen.query_one(PreviewList).line_text(0)
        assert "\x1b" not in prompt and "\x07" not in prompt and "\x9b" not in prompt
        assert "\u241b]52;c;ZXZpbA==\u2407 [red]hi[/red] " + C1_PLACEHOLDER + "2J" in prompt
        dialog = screen.query_one(".dialog")
        assert "\u241b[H" in dialog.border_title and "x" in dialog.border_title
        assert rendered(screen.query_one("#preview-note", Static)) == "note \u2407[i]n[/i]"


def test_preview_rejects_bad_arguments():
    with pytest.raises(ValueError):
        PreviewScreen("t", ITEMS, 1, mode="drop")
    with pytest.raises(ValueError):
        PreviewScreen("t", [ITEMS[0], ITEMS[0]], 1)
