"""Every colour of the transcript comes from the theme (issue 13, item 24): legible in
each built-in theme, light ones included, and a theme change redraws in the new colours.

Legible: the WCAG contrast ratio of each text colour over the scrollback's background is
at least 4.5 (the user's own messages at least 7); a message out of the context is
dimmed on purpose, and still at least 3.5; the window's rule, a line across the pane, 3.
In every built-in light theme, the lines and secondary labels around it too (issue 23,
item 12): measured on the composed screen of the real app, where a dim style has been
turned into a colour, each reaches 3.
"""

from __future__ import annotations

import re

import pytest
from rich.color import Color
from textual.app import App, ComposeResult
from textual.color import Color as TextualColor
from textual.geometry import Region
from textual.theme import BUILTIN_THEMES

from ikigai_tui.tui import render
from ikigai_tui.tui.styles_path import STYLES
from ikigai_tui.tui.palette import Palette
from ikigai_tui.tui.transcript import Item
from ikigai_tui.tui.widgets import layout, scrollback, streaming
from ikigai_tui.tui.widgets.agent_tree import AgentRow, AgentTreeView, TreeStyles
from ikigai_tui.tui.widgets.keybar import KeyBar
from ikigai_tui.tui.widgets.scrollback import Scrollback

from .conftest import agent_named, idle, root_id, say, settle

ITEMS = [Item(1, "user", "my own question"),
         Item(2, "assistant", "# Title\n\nSome **bold**, `code`, a [link](http://x.example)\n\n"
                              "> quoted\n\n- item\n\n```python\nx = 1\n```"),
         Item(3, "command", "/marks", {"output": ["no marks"]}),
         Item(4, "error", "Error: something")]
# Themes whose colours are the terminal's own ANSI palette: the terminal decides.
ANSI_THEMES = {"ansi-dark", "ansi-light"}
THEMES = [name for name in BUILTIN_THEMES if name not in ANSI_THEMES]
LIGHT_THEMES = [name for name in THEMES if not BUILTIN_THEMES[name].dark]


def luminance(color: Color) -> float:
    def channel(value: int) -> float:
        v = value / 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    r, g, b = color.get_truecolor()
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(a: Color, b: Color) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


class Host(App):
    CSS_PATH = [STYLES / "app.tcss", STYLES / "widgets.tcss"]

    def __init__(self, theme: str) -> None:
        super().__init__()
        self.start_theme = theme

    def compose(self) -> ComposeResult:
        async def pages(**_where):
            return ITEMS

        self.scrollback = Scrollback("agent", pages)
        self.agents = AgentTreeView()
        yield self.agents
        yield self.scrollback

    def on_mount(self) -> None:
        self.theme = self.start_theme


async def shown(theme: str, check) -> None:
    """Run `check(app, scrollback)` with the items drawn in the theme."""
    app = Host(theme)
    async with app.run_test(size=(100, 40)) as pilot:
        await app.scrollback.load_latest()
        for _ in range(3):
            await pilot.pause()
        await check(app, app.scrollback, pilot)


async def test_the_users_message_is_legible_in_textual_light():
    """The defect: near-white on light grey. Drawn in textual-light, the characters of
    the user's message stand out from the background the screen shows them on."""
    async def check(_app, sb, _pilot):
        background = sb.rich_style.bgcolor
        line = next(y for y in range(len(sb._lines)) if "my own question" in sb._lines[y].text)
        strip = sb.render_line(line - int(sb.scroll_y))
        segments = [s for s in strip if "question" in s.text]
        assert segments
        for segment in segments:
            assert contrast(segment.style.color, segment.style.bgcolor or background) >= 7

    await shown("textual-light", check)


@pytest.mark.parametrize("theme", THEMES)
async def test_every_transcript_colour_is_legible(theme):
    async def check(_app, sb, _pilot):
        background = sb.rich_style.bgcolor
        palette = sb.palette
        for name in Palette._fields:
            style = getattr(palette, name)
            if not hasattr(style, "color") or style.color is None:
                continue
            floor = {"user": 7.0, "outside": 3.5, "rule": 3.0}.get(name, 4.5)
            ratio = contrast(style.color, background)
            assert ratio >= floor, f"{theme}: {name} {ratio:.1f} < {floor}"
        for name, style in palette.markdown:
            if style.color is not None:
                ratio = contrast(style.color, style.bgcolor or background)
                assert ratio >= 4.5, f"{theme}: {name} {ratio:.1f}"

    await shown(theme, check)


def test_the_transcript_code_names_no_colour():
    """Colours come from the palette: the modules that draw the transcript hold no colour
    of their own."""
    named = re.compile(r"""["'](?:bright_)?(?:white|black|red|green|yellow|blue|magenta|cyan)\b"""
                       r"""|["']#[0-9a-fA-F]{3,6}["']|color=""")
    for module in (render, scrollback, streaming, layout):
        source = open(module.__file__).read()
        assert not named.findall(source), module.__name__


async def test_a_theme_change_redraws_the_transcript_in_its_colours():
    async def check(app, sb, pilot):
        before = sb.palette.user.color
        app.theme = "textual-light"
        for _ in range(4):
            await pilot.pause()
        assert sb.palette.user.color != before
        line = next(s for s in sb._lines if "my own question" in s.text)
        assert any(seg.style and seg.style.color == sb.palette.user.color
                   for seg in line if "question" in seg.text)

    await shown("textual-dark", check)


@pytest.mark.parametrize("theme", THEMES)
async def test_the_agent_trees_colours_are_legible(theme):
    """The tree's status glyphs, usage, mail and window fill: from the theme too. A status
    glyph's shape tells the state (○ ● ✕), its colour repeats it: the theme's own success
    and error colours, at least 2.4 (atom-one-light's green); text at least 4.5."""

    async def check(app, _sb, pilot):
        tree = app.agents
        tree.refresh_agents([AgentRow("a", "main", "working", 2, 85.0, None, 1_000, 2_000)], "a")
        await pilot.pause()
        background = tree.rich_style.bgcolor
        styles = tree.styles_of_labels
        for name in TreeStyles._fields:
            style = getattr(styles, name)
            ratio = contrast(style.color, style.bgcolor or background)
            floor = 2.4 if name in ("working", "dead") else 4.5
            assert ratio >= floor, f"{theme}: {name} {ratio:.1f} < {floor}"
        label = tree.node_for("a").label
        assert any(span.style == styles.mail for span in label.spans)

    await shown(theme, check)


GUIDES = set("│├└─┃┣┗━")
DIVIDERS = set("▕▏")


def _shown_contrast(segment) -> float:
    """The contrast of a composed cell as a terminal shows it: dim halves the foreground
    toward the background (as Textual's DimFilter and terminals do)."""
    fg, bg = segment.style.color, segment.style.bgcolor
    if segment.style.dim:
        fg = TextualColor.from_rich_color(bg).blend(TextualColor.from_rich_color(fg), 0.5).rich_color
    return contrast(fg, bg)


def _glyphs(strips, region: Region):
    """(character, segment) of each visible character the screen shows inside `region`."""
    for y in range(region.y, region.bottom):
        x = 0
        for segment in strips[y]:
            for char in segment.text:
                if region.x <= x < region.right and not char.isspace():
                    yield char, segment
                x += 1


async def _light_scene(session) -> None:
    """A root with pruned turns (a 300-token window) and a child with a grandchild."""
    root = root_id(session)
    for text in ("Plan: research, then write.", "More words here please", "and again"):
        await say(session, root, text)
    await session.command(root, "/fork --name research Find sources on context windows.")
    await session.wait_idle()
    await session.command(agent_named(session, "research"), "/fork --name critic Check.")
    await session.wait_idle()


@pytest.mark.parametrize("theme", LIGHT_THEMES)
async def test_lines_and_secondary_labels_reach_3_to_1_in_light_themes(bench, theme):
    """The tree's connectors, the dividers between tree and panes, the tree's usage
    figures (tree focused or not), the gauge with its "turns pruned" tail and the footer's
    keys, as composed on screen in two panes: each glyph at least 3:1 (1.0 to 2.9 before)."""
    async with bench.prep(budget=300) as session:
        await _light_scene(session)
    app = bench.app(budget=300)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.theme = theme
        await pilot.press("f2")
        await idle(pilot)
        worst: dict[str, tuple[float, str]] = {}
        for tree_focused in (False, True):
            if tree_focused:
                await pilot.press("ctrl+t")
                await idle(pilot)
            strips = app.screen._compositor.render_strips()
            tree = app.agent_tree
            seen = {"connector": [], "tree label": [], "divider": [], "gauge": [],
                    "gauge tail": [], "footer key": []}
            for char, seg in _glyphs(strips, tree.scrollable_content_region):
                seen["connector" if char in GUIDES else "tree label"].append((char, seg))
            for char, seg in _glyphs(strips, app.screen.region):
                if char in DIVIDERS:
                    seen["divider"].append((char, seg))
            for char, seg in _glyphs(strips, app.gauge.region):
                seen["gauge tail" if "pruned" in seg.text else "gauge"].append((char, seg))
            keybar = app.screen.query_one(KeyBar)
            for char, seg in _glyphs(strips, keybar.region):
                if seg.style.bold:  # the keys; their descriptions are plain
                    seen["footer key"].append((char, seg))
            for element, glyphs in seen.items():
                assert glyphs, f"{theme}: no {element} on screen"
                for char, seg in glyphs:
                    ratio = _shown_contrast(seg)
                    if ratio < worst.get(element, (99.0, ""))[0]:
                        worst[element] = (ratio, f"{char!r} {seg.style}")
        low = {element: f"{ratio:.2f} {where}" for element, (ratio, where) in worst.items()
               if ratio < 3.0}
        assert not low, f"{theme}: {low}"
