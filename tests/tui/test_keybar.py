"""The footer (KeyBar): the screen's bindings on one line, clickable, following the focus."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widget import Widget
from textual.widgets import Static

from ikigai_tui.tui.widgets.keybar import KeyBar

from tests.tui.harness import SIZE, WIDGETS_CSS


class Editor(Widget, can_focus=True):
    BINDINGS = [Binding("ctrl+s", "save", "Save")]

    def render(self) -> str:
        return "editor"

    def action_save(self) -> None:
        self.app.calls.append("save")


class KeysApp(App):
    CSS_PATH = WIDGETS_CSS
    AUTO_FOCUS = None
    BINDINGS = [
        Binding("f1", "help", "Help"),
        Binding("f9", "help", "Help again"),  # a second key for the same action
        Binding("f5", "hidden", "Hidden", show=False),
        Binding("f6", "later", "Later"),
        Binding("ctrl+q", "quit", "Quit"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []
        self.later_ready: bool | None = None  # None: shown dimmed; True: enabled

    def compose(self) -> ComposeResult:
        yield Static("above", id="above")
        yield Editor(id="editor")
        yield KeyBar()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "later":
            return self.later_ready
        return True

    def action_help(self) -> None:
        self.calls.append("help")

    def action_later(self) -> None:
        self.calls.append("later")


def _bar_text(app: App) -> str:
    """The bar as drawn on the screen now (not a fresh render)."""
    bar = app.query_one(KeyBar)
    line = app.screen._compositor.render_strips()[bar.region.y]
    return "".join(segment.text for segment in line.crop(bar.region.x, bar.region.right))


async def test_shows_each_action_once_hides_show_false_and_puts_the_palette_last():
    app = KeysApp()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        keys = [(key, description) for key, _, description, _ in app.query_one(KeyBar).entries()]
        assert ("f1", "Help") in keys
        assert all(key != "f9" for key, _ in keys)  # f1 already stands for "help"
        assert all(key != "f5" for key, _ in keys)
        assert keys[-1][0] == app.COMMAND_PALETTE_BINDING
        text = _bar_text(app)
        assert " f1 Help " in text and "Quit" in text and "Hidden" not in text
        assert text.index("Help") < text.index("Later")  # the bindings' own order
        assert text.endswith(" palette ") and len(text) == app.query_one(KeyBar).size.width
        assert "  " * 10 in text


async def test_follows_the_focus():
    app = KeysApp()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert "Save" not in _bar_text(app)
        app.query_one(Editor).focus()
        await pilot.pause()
        assert "Save" in _bar_text(app)
        await pilot.press("ctrl+s")
        assert app.calls == ["save"]
        app.set_focus(None)
        await pilot.pause()
        assert "Save" not in _bar_text(app)


async def test_a_disabled_binding_is_dimmed_and_enabled_again_when_checked():
    app = KeysApp()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        bar = app.query_one(KeyBar)
        later = next(e for e in bar.entries() if e[0] == "f6")
        assert later[3] is False
        content = bar.render()
        start = content.plain.index("f6")
        styles_at_later = {str(span.style) for span in content.spans
                           if span.start <= start < span.end}
        help_start = content.plain.index("f1")
        styles_at_help = {str(span.style) for span in content.spans
                          if span.start <= help_start < span.end}
        assert styles_at_later and styles_at_later != styles_at_help
        app.later_ready = True
        app.refresh_bindings()
        await pilot.pause()
        assert next(e for e in bar.entries() if e[0] == "f6")[3] is True


async def test_clicking_a_key_runs_it():
    app = KeysApp()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        bar = app.query_one(KeyBar)
        x = _bar_text(app).index("Help")
        assert await pilot.click(KeyBar, offset=(x + 1, 0))
        await pilot.pause()
        assert app.calls == ["help"]
        x = _bar_text(app).index("f1")
        await pilot.click(KeyBar, offset=(x, 0))
        await pilot.pause()
        assert app.calls == ["help", "help"]
        assert bar.region.height == 1
