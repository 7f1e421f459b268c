"""The scrollback's lines as Textual styles them, kept by the line they were made from.

Textual's `StylesCache` adds a widget's padding, background and filters to each line its
`render_line` returns, and keeps the result by the row on the widget. A scroll moves every
line to another row, so a pane that scrolls as it follows a streaming reply has every row
styled again (a new Strip per row, about half of a repainted line's cost), though all but
the newest line are the lines it showed a frame ago. `LineStylesCache` keeps the styled
line by the Strip it was made from (the scrollback returns the same Strip object for a
line that did not change: widgets/streaming.py, Scrollback.render_line) and by everything
else the styling reads (the widths, padding, backgrounds, opacity, tint, the ANSI theme), so
a scrolled row is looked up, and so is every row when the pane's height changes. A widget with a border, an outline, vertical padding or a
hatch (rows drawn by position, not from a line) is styled by Textual as before.

`FewKindsOfRows` does the same for a widget whose rows are a few kinds of line, drawn anew
each time (a scrollbar: track, thumb; a container's background): each kind is one Strip,
styled once, not once a row each time the widget is resized (every pane, its bar and the
containers around them, when the input below the panes grows a line). Being one object,
a kind's row is also cut once where the widgets over it begin and end (Textual's
compositor cuts every row of a container so, and keeps the pieces by the Strip).
"""

from __future__ import annotations

from textual._styles_cache import StylesCache
from textual.containers import Horizontal, Vertical
from textual.strip import Strip

SCREENS = 3  # screenfuls of lines kept (what a scroll or a resize shows again), no more:
# a line that left the view long ago is not kept alive (nor its caches, for the collector)


def kept_at_most(height: int) -> int:
    return SCREENS * max(8, height)


class LineStylesCache(StylesCache):
    """A widget's `_styles_cache` that looks a row up by its line as well as by its row."""

    def __init__(self) -> None:
        super().__init__()
        self._styled: dict[int, tuple[Strip, tuple, Strip]] = {}  # id(line) -> (line, key, styled)
        self._plain = False  # the widget's rows are its lines, padded at the sides only
        self._limit = kept_at_most(0)

    def render(self, styles, size, *args, **kwargs) -> list[Strip]:  # type: ignore[override]
        self._plain = _plain(styles)
        self._limit = kept_at_most(size.height)
        return super().render(styles, size, *args, **kwargs)

    def render_line(self, styles, y, size, content_size, padding, base_background, background,
                    render_content_line, border_title, border_subtitle, opacity, ansi_theme,
                    native_ansi) -> Strip:  # type: ignore[override]
        args = [styles, y, size, content_size, padding, base_background, background,
                render_content_line, border_title, border_subtitle, opacity, ansi_theme,
                native_ansi]
        if not self._plain or y >= content_size.height:
            return super().render_line(*args)
        line = render_content_line(y)
        # Widths only: a row of a plain widget does not depend on the height (the panes
        # all grow or shrink a row when the input below them does: every row is kept).
        key = (size.width, content_size.width, tuple(padding), base_background, background,
               opacity, ansi_theme, native_ansi, styles.tint, styles.text_opacity)
        styled = self._styled
        kept = styled.get(id(line))
        if kept is not None and kept[0] is line and kept[1] == key:
            return kept[2]
        args[7] = lambda _y: line
        strip = super().render_line(*args)
        while len(styled) >= self._limit:
            del styled[next(iter(styled))]  # the oldest
        styled[id(line)] = (line, key, strip)
        return strip


def _plain(styles) -> bool:
    """Whether each row of the widget is one of its lines with padding at the sides only."""
    gutter = styles.gutter
    return (not gutter.top and not gutter.bottom
            and not any(edge for edge, _ in styles.border)
            and not any(edge for edge, _ in styles.outline)
            and not (styles.has_rule("hatch") and styles.hatch != "none"))


KINDS = 64  # kinds of row kept (a few are drawn at a time; another theme, other ones)


class FewKindsOfRows:
    """A mixin for a Widget (before it in the bases) drawing few kinds of row."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._styles_cache = LineStylesCache()
        self._kinds: dict[tuple, Strip] = {}

    def render_line(self, y: int) -> Strip:
        line = super().render_line(y)  # type: ignore[misc]
        kinds = self._kinds
        kind = tuple(line)  # its segments
        same = kinds.get(kind)
        if same is None:
            if len(kinds) >= KINDS:
                kinds.clear()
            kinds[kind] = same = line
        return same


class BareHorizontal(FewKindsOfRows, Horizontal):
    """A Horizontal container (its rows: its background)."""


class BareVertical(FewKindsOfRows, Vertical):
    """A Vertical container (its rows: its background)."""
