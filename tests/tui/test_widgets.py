"""The input and the context gauge, each in a small harness App (the tree: test_agent_tree)."""

from __future__ import annotations


import pytest
from rich.cells import cell_len
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from ikigai_tui.tui.widgets.gauge import ContextGauge, format_tokens
from ikigai_tui.tui.widgets.prompt import PromptInput

from tests.tui.harness import SIZE, WIDGETS_CSS, screenshot

# ---- PromptInput ----------------------------------------------------------------------


COMMANDS = ["/clear", "/compact", "/context", "/forget", "/help"]


def complete_commands(before: str) -> list[str]:
    word = before.rpartition(" ")[2]
    return [c for c in COMMANDS if c.startswith(word)] if before.startswith("/") else []


class PromptApp(App):
    CSS_PATH = WIDGETS_CSS

    def __init__(self) -> None:
        super().__init__()
        self.submitted: list[str] = []

    def compose(self) -> ComposeResult:
        yield Static("scrollback", id="above")
        yield PromptInput(completer=complete_commands, id="prompt")

    def on_mount(self) -> None:
        self.query_one(PromptInput).focus()

    def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        assert message.prompt is self.query_one(PromptInput)
        self.submitted.append(message.text)


async def _type(pilot, text: str) -> None:
    await pilot.press(*[c if c != " " else "space" for c in text])


async def test_enter_submits_the_text_and_clears():
    app = PromptApp()
    async with app.run_test(size=SIZE) as pilot:
        prompt = app.query_one(PromptInput)
        await _type(pilot, "hello world")
        assert prompt.text == "hello world"
        await pilot.press("enter")
        await pilot.pause()
        assert app.submitted == ["hello world"]
        assert prompt.text == ""
        assert prompt.input_history == ["hello world"]


async def test_blank_enter_posts_nothing():
    app = PromptApp()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await _type(pilot, "   ")
        await pilot.press("enter")
        await pilot.pause()
        assert app.submitted == []
        assert "\n" not in app.query_one(PromptInput).text


async def test_ctrl_j_inserts_a_newline_and_enter_submits_both_lines():
    app = PromptApp()
    async with app.run_test(size=SIZE) as pilot:
        prompt = app.query_one(PromptInput)
        await _type(pilot, "one")
        await pilot.press("ctrl+j")
        await _type(pilot, "two")
        assert prompt.text == "one\ntwo"
        assert prompt.document.line_count == 2
        screenshot(app, "prompt_multiline")
        await pilot.press("enter")
        await pilot.pause()
        assert app.submitted == ["one\ntwo"]
        assert prompt.text == ""


@pytest.mark.parametrize("key", ["shift+enter", "alt+enter", "ctrl+enter"])
async def test_other_newline_keys(key):
    app = PromptApp()
    async with app.run_test(size=SIZE) as pilot:
        await _type(pilot, "a")
        await pilot.press(key)
        await _type(pilot, "b")
        assert app.query_one(PromptInput).text == "a\nb"
        assert app.submitted == []


async def test_app_bindings_on_enter_and_ctrl_j_do_not_steal_them():
    class BoundApp(PromptApp):
        BINDINGS = [
            Binding("ctrl+j", "fired('ctrl+j')", "x", priority=True),
            Binding("enter", "fired('enter')", "y"),
        ]

        def action_fired(self, key: str) -> None:
            self.submitted.append(f"binding {key}")

    app = BoundApp()
    async with app.run_test(size=SIZE) as pilot:
        await _type(pilot, "a")
        await pilot.press("ctrl+j")
        await _type(pilot, "b")
        await pilot.press("enter")
        await pilot.pause()
        assert app.submitted == ["a\nb"]


async def test_history_walks_back_and_forth_and_keeps_the_draft():
    app = PromptApp()
    async with app.run_test(size=SIZE) as pilot:
        prompt = app.query_one(PromptInput)
        for text in ("first", "second"):
            await _type(pilot, text)
            await pilot.press("enter")
        await _type(pilot, "draft")
        await pilot.press("up")
        assert prompt.text == "second"
        await pilot.press("up")
        assert prompt.text == "first"
        await pilot.press("up")  # the oldest stays
        assert prompt.text == "first"
        await pilot.press("down")
        assert prompt.text == "second"
        await pilot.press("down")
        assert prompt.text == "draft"
        assert prompt.cursor_location == (0, 5)
        await pilot.press("down")  # nothing newer: stays on the draft
        assert prompt.text == "draft"


async def test_history_with_multi_line_entries_and_set_history():
    app = PromptApp()
    async with app.run_test(size=SIZE) as pilot:
        prompt = app.query_one(PromptInput)
        prompt.set_history(["old", "line 1\nline 2", "  "])
        assert prompt.input_history == ["old", "line 1\nline 2"]
        await pilot.press("up")
        assert prompt.text == "line 1\nline 2"
        assert prompt.cursor_location == (0, 6)  # first line: Up keeps walking back
        await pilot.press("up")
        assert prompt.text == "old"
        await pilot.press("down")
        assert prompt.text == "line 1\nline 2"
        assert prompt.cursor_location == (1, 6)  # last line: Down keeps walking forward
        await pilot.press("up")  # inside the entry: moves the cursor, not the history
        assert prompt.text == "line 1\nline 2"
        assert prompt.cursor_location[0] == 0
        await pilot.press("down", "down")
        assert prompt.text == ""


async def test_tab_with_one_candidate_completes_with_a_space():
    app = PromptApp()
    async with app.run_test(size=SIZE) as pilot:
        prompt = app.query_one(PromptInput)
        await _type(pilot, "/he")
        await pilot.press("tab")
        assert prompt.text == "/help "
        assert prompt.border_subtitle is None
        assert prompt.has_focus


async def test_tab_with_several_candidates_completes_the_prefix_and_shows_them():
    app = PromptApp()
    async with app.run_test(size=SIZE) as pilot:
        prompt = app.query_one(PromptInput)
        await _type(pilot, "/c")
        await pilot.press("tab")
        await pilot.pause()
        assert prompt.text == "/c"  # no longer common prefix than "/c"
        assert prompt.border_subtitle == "/clear  /compact  /context"
        await _type(pilot, "o")
        await pilot.pause()
        assert prompt.border_subtitle is None  # typing makes the list stale
        await pilot.press("tab")
        await pilot.pause()
        assert prompt.text == "/co"
        assert prompt.border_subtitle == "/compact  /context"
        await _type(pilot, "m")
        await pilot.press("tab")
        await pilot.pause()
        assert prompt.text == "/compact "
        assert prompt.border_subtitle is None


async def test_tab_extends_to_the_common_prefix():
    app = PromptApp()
    async with app.run_test(size=SIZE) as pilot:
        prompt = app.query_one(PromptInput)
        await _type(pilot, "/cl")
        await pilot.press("backspace", "backspace")
        await _type(pilot, "f")  # "/f" -> only /forget
        await pilot.press("tab")
        assert prompt.text == "/forget "
        prompt.clear()
        await _type(pilot, "/co")
        await pilot.press("left", "left")  # the completer sees only the text before the cursor
        await pilot.press("end")
        await pilot.press("tab")
        await pilot.pause()
        screenshot(app, "prompt_completion")
        assert prompt.border_subtitle == "/compact  /context"


async def test_tab_on_empty_input_moves_the_focus():
    class TwoInputs(PromptApp):
        def compose(self) -> ComposeResult:
            yield PromptInput(completer=complete_commands, id="prompt")
            yield PromptInput(id="other")

    app = TwoInputs()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("tab")
        assert app.focused is app.query_one("#other")


async def test_set_blocked_sets_the_title_and_class():
    app = PromptApp()
    async with app.run_test(size=SIZE) as pilot:
        prompt = app.query_one(PromptInput)
        prompt.border_title = "agent-1"
        prompt.set_blocked("Context full. Use /clear to continue.")
        await pilot.pause()
        assert prompt.has_class("-blocked")
        assert prompt.border_title == "Context full. Use /clear to continue."
        assert prompt.blocked == "Context full. Use /clear to continue."
        screenshot(app, "prompt_blocked")
        # It does not refuse submission itself.
        await _type(pilot, "hi")
        await pilot.press("enter")
        await pilot.pause()
        assert app.submitted == ["hi"]
        prompt.set_blocked(None)
        assert not prompt.has_class("-blocked")
        assert prompt.border_title == "agent-1"


async def test_blocked_message_is_not_markup():
    app = PromptApp()
    async with app.run_test(size=SIZE) as pilot:
        prompt = app.query_one(PromptInput)
        prompt.set_blocked("[bold red]x\x1b[2J")
        await pilot.pause()
        assert "\x1b" not in prompt.border_title
        assert "bold red" in prompt.border_title


# ---- ContextGauge ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("count", "shown"),
    [
        (0, "0"),
        (999, "999"),
        (1000, "1K"),
        (1950, "1.9K"),
        (2000, "2K"),
        (9500, "9.5K"),
        (9999, "9.9K"),
        (80_000, "80K"),
        (200_000, "200K"),
        (1_500_000, "1.5M"),
        (2_000_000, "2M"),
    ],
)
def test_token_format(count, shown):
    assert format_tokens(count) == shown


class GaugeApp(App):
    CSS_PATH = WIDGETS_CSS

    def compose(self) -> ComposeResult:
        yield ContextGauge(id="gauge")


def _plain(gauge: ContextGauge) -> str:
    content = gauge.content
    return content.plain if isinstance(content, Text) else str(content)


async def test_gauge_text_and_estimate_marker():
    app = GaugeApp()
    async with app.run_test(size=SIZE) as pilot:
        gauge = app.query_one(ContextGauge)
        assert _plain(gauge) == "Sent: …"
        gauge.update_usage(80_000, 200_000, 40.0, "normal", True)
        assert _plain(gauge) == "Sent: 80K · 40% of 200K · window off"
        gauge.update_usage(80_000, 200_000, 40.0, "normal", False)
        assert _plain(gauge) == "Sent: ~80K · 40% of 200K · window off"
        gauge.update_usage(9_500, 1_500_000, 0.63, "normal", True, budget=100_000, pruned_turns=3)
        assert _plain(gauge) == "Sent: 9.5K of 100K window · 1% of 1.5M · 3 turns pruned"
        gauge.update_usage(999, 200_000, 0.5, "normal", True, pruned_turns=1)
        assert _plain(gauge) == "Sent: 999 · 1% of 200K · window off · 1 turn pruned"
        # Issue 13: a full 2K window of a 200K model read "(0%)", without the window.
        gauge.update_usage(1_950, 200_000, 0.975, "normal", False, budget=2_000)
        assert _plain(gauge) == "Sent: ~1.9K of 2K window · 1% of 200K"
        gauge.update_usage(120_000, 200_000, 60.0, "normal", True, 0, 49_669)
        assert _plain(gauge).endswith(" · 49,669 turns pruned")
        await pilot.pause()
        screenshot(app, "gauge_normal")
        gauge.set_unknown()
        assert _plain(gauge) == "Sent: …"


@pytest.mark.parametrize("width", [80, 44, 40, 30, 20, 12])
async def test_a_narrow_gauge_drops_whole_phrases(width):
    """Issue 23 review, item 1: at 80x24 the gauge read `... · 1% of 200K · 27` ("turns
    pruned" lost). Whole phrases go, the limit's share first; never a phrase cut."""
    app = GaugeApp()
    async with app.run_test(size=(width, 3)) as pilot:
        gauge = app.query_one(ContextGauge)
        gauge.update_usage(781, 200_000, 0.4, "normal", False, budget=800, pruned_turns=27)
        await pilot.pause()
        full = _plain(gauge)
        assert full.endswith(" · 27 turns pruned"), full
        line = gauge.render().plain
        assert cell_len(line) <= gauge.content_size.width
        phrases = full.split(" · ")
        if width >= cell_len(full):
            assert line == full
        elif width >= cell_len(f"{phrases[0]} · {phrases[2]}"):
            assert line == f"{phrases[0]} · {phrases[2]}"  # the share of 200K went first
        else:
            kept = line.removesuffix("…").split(" · ")
            assert kept[0] and phrases[0].startswith(kept[0]) and len(kept) == 1, line
            assert phrases[0][len(kept[0]):][:1] in ("", " ", ":"), line  # after a word


async def test_gauge_state_classes_switch_one_at_a_time():
    app = GaugeApp()
    async with app.run_test(size=SIZE) as pilot:
        gauge = app.query_one(ContextGauge)
        assert gauge.has_class("-normal")
        states = ("-normal", "-warning", "-critical", "-full")
        for state, percent in (("warning", 80.0), ("critical", 96.0), ("full", 100.0), ("normal", 1.0)):
            gauge.update_usage(int(percent * 2000), 200_000, percent, state, True)
            await pilot.pause()
            assert [s for s in states if gauge.has_class(s)] == [f"-{state}"]
            assert gauge.state == state
            screenshot(app, f"gauge_{state}")
        gauge.update_usage(1, 200_000, 0.0, "bogus", True)
        assert gauge.state == "normal"


async def test_gauge_states_have_distinct_colours():
    app = GaugeApp()
    async with app.run_test(size=SIZE) as pilot:
        gauge = app.query_one(ContextGauge)
        seen = set()
        for state in ("normal", "warning", "critical", "full"):
            gauge.update_usage(1, 2, 50.0, state, True)
            await pilot.pause()
            style = gauge.rich_style
            seen.add((str(style.color), str(style.bgcolor), bool(style.reverse)))
        assert len(seen) == 4
