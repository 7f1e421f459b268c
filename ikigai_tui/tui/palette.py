"""The scrollback's colours, read from the theme.

Every colour a transcript is drawn with comes from the Scrollback's component classes
(``scrollback--user``, ``scrollback--md-code`` ...), whose rules in
``styles/widgets.tcss`` use the theme's variables (``$text``, ``$text-accent``,
``$text-muted`` ...). So a message is legible in every theme, light ones included, and a
theme change redraws the transcript in the new colours. Rendering itself (render.py)
only receives a `Palette` of rich Styles and never names a colour.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, NamedTuple

from rich.style import Style
from rich.theme import Theme

if TYPE_CHECKING:
    from textual.widget import Widget


class Palette(NamedTuple):
    user: Style = Style()
    user_mark: Style = Style()
    tool: Style = Style()
    command: Style = Style()
    output: Style = Style()
    error: Style = Style()
    note: Style = Style()
    fold: Style = Style()
    rule: Style = Style()
    outside: Style = Style()  # the text of a message the agent no longer sees
    outside_label: Style = Style()  # the line saying why
    id: Style = Style()
    welcome: Style = Style()
    welcome_title: Style = Style()
    welcome_key: Style = Style()
    markdown: tuple[tuple[str, Style], ...] = ()  # rich's markdown.* styles, for replies
    dark: bool = True  # picks the code blocks' highlighting theme

    @property
    def code_theme(self) -> str:
        return "monokai" if self.dark else "default"

    @property
    def markdown_theme(self) -> Theme | None:
        return _theme(self.markdown) if self.markdown else None


@lru_cache(maxsize=8)
def _theme(styles: tuple[tuple[str, Style], ...]) -> Theme:
    return Theme(dict(styles), inherit=True)


PLAIN = Palette()

# Palette field -> component class. Only the colour and text style are taken; the
# background stays the scrollback's own.
COMPONENTS = {name: "scrollback--" + name.replace("_", "-")
              for name in Palette._fields if name not in ("markdown", "dark")}

# rich's markdown style names -> component class (rich's defaults hard-code ANSI colours,
# e.g. inline code in cyan on black).
MARKDOWN = {
    "markdown.code": "scrollback--md-code",
    "markdown.kbd": "scrollback--md-code",
    "markdown.block_quote": "scrollback--md-quote",
    "markdown.list": "scrollback--md-list",
    "markdown.item.number": "scrollback--md-list",
    "markdown.item.bullet": "scrollback--md-list",
    "markdown.h1": "scrollback--md-h1",
    "markdown.h2": "scrollback--md-h2",
    "markdown.h3": "scrollback--md-h3",
    "markdown.h4": "scrollback--md-h4",
    "markdown.h5": "scrollback--md-h4",
    "markdown.h6": "scrollback--md-h4",
    "markdown.link": "scrollback--md-link",
    "markdown.link_url": "scrollback--md-link",
    "markdown.table.border": "scrollback--md-border",
    "markdown.table.header": "scrollback--md-h4",
    "markdown.hr": "scrollback--md-border",
}

COMPONENT_CLASSES = frozenset(COMPONENTS.values()) | frozenset(MARKDOWN.values())


def _style(widget: Widget, component: str, background: bool = False) -> Style:
    full = widget.get_component_rich_style(component)
    partial = widget.get_component_rich_style(component, partial=True)
    # The colour as drawn (an alpha blended over the background), the text style as set.
    return Style(color=full.color, bgcolor=full.bgcolor if background else None,
                 bold=partial.bold, italic=partial.italic, underline=partial.underline,
                 strike=partial.strike, dim=partial.dim, reverse=partial.reverse)


def palette_of(widget: Widget) -> Palette:
    """The palette of a mounted widget that declares COMPONENT_CLASSES."""
    styles = {name: _style(widget, component) for name, component in COMPONENTS.items()}
    code_bg = widget.get_component_styles("scrollback--md-code").background
    markdown = tuple((name, _style(widget, component,
                                   background=component.endswith("code") and code_bg.a > 0))
                     for name, component in MARKDOWN.items())
    return Palette(**styles, markdown=markdown, dark=widget.app.current_theme.dark)
