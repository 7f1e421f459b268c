"""The footer: one line of the screen's key bindings, drawn by a single widget.

Textual's ``Footer`` composes a widget per key and recomposes them whenever the bindings
change; at start-up that cost about 50 ms (a third of a minimal app's whole start), so
this bar renders the same information as one line of ``Content`` instead. Each key is
clickable (it types the key), disabled bindings are dimmed, one key per action is
shown, and the command palette's key sits at the right. Colours come from the theme's
footer variables, through the component classes in ``styles/widgets.tcss``.
"""

from __future__ import annotations

from rich.cells import cell_len
from textual import events
from textual.content import Content
from textual.screen import Screen
from textual.style import Style
from textual.widget import Widget

__all__ = ["KeyBar"]


class KeyBar(Widget, can_focus=False):
    """The key bindings of the screen it is on, as one line."""

    COMPONENT_CLASSES = {"keybar--key", "keybar--description", "keybar--disabled"}
    ALLOW_SELECT = False
    _zones: list[tuple[int, int, str]] = []  # (start, end, key) of each clickable key, per render
    DEFAULT_CSS = """
    KeyBar {
        dock: bottom;
        height: 1;
    }
    """

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _bindings_changed(self, screen: Screen) -> None:
        if screen is self.screen:
            self.refresh()

    def entries(self) -> list[tuple[str, str, str, bool]]:
        """(key, key display, description, enabled) for each action shown, in order.

        The command palette's key is last, whatever its place in the bindings.
        """
        app = self.app
        seen: set[str] = set()
        shown: list[tuple[str, str, str, bool]] = []
        palette: tuple[str, str, str, bool] | None = None
        for _node, binding, enabled, tooltip in self.screen.active_bindings.values():
            if binding.key == app.COMMAND_PALETTE_BINDING and app.ENABLE_COMMAND_PALETTE:
                palette = (binding.key, app.get_key_display(binding),
                           binding.description or tooltip, enabled)
                continue
            if not binding.show or binding.action in seen:
                continue
            seen.add(binding.action)
            shown.append((binding.key, app.get_key_display(binding), binding.description,
                          enabled))
        if palette is not None:
            shown.append(palette)
        return shown

    def render(self) -> Content:
        entries = self.entries()
        palette_key = self.app.COMMAND_PALETTE_BINDING
        last = entries[-1:] if entries and entries[-1][0] == palette_key else []
        rest = entries[:len(entries) - len(last)]
        # Too wide: one space between keys instead of two, then the last keys dropped
        # (the palette's stays); never a key or a word cut at the edge.
        for count in range(len(rest), -1, -1):
            for pad in (" ", ""):
                content = self._line([*rest[:count], *last], pad)
                if content.cell_length <= self.size.width or not count and not pad:
                    return content
        return Content("")  # not reached: no entries at all is an empty line

    def _line(self, entries: list[tuple[str, str, str, bool]], pad: str) -> Content:
        key_style = self.get_visual_style("keybar--key")
        description_style = self.get_visual_style("keybar--description")
        disabled_style = self.get_visual_style("keybar--disabled")
        palette_key = self.app.COMMAND_PALETTE_BINDING
        parts: list[tuple[str, Style] | str] = []
        zones: list[tuple[int, int, str]] = []
        x = 0
        for index, (key, display, description, enabled) in enumerate(entries):
            if enabled:  # (the gap before the key unstyled: drawn as a gap in an SVG too)
                pieces = [(" ", description_style), (f"{display} ", key_style),
                          (f"{description}{pad}", description_style)]
            else:
                pieces = [(f" {display} {description}{pad}", disabled_style)]
            width = sum(cell_len(text) for text, _ in pieces)
            if key == palette_key and index == len(entries) - 1:
                gap = self.size.width - x - width  # the palette's key at the right end
                if gap > 0:
                    parts.append(" " * gap)
                    x += gap
            parts.extend(pieces)
            if enabled:
                zones.append((x, x + width, key))
            x += width
        self._zones = zones
        return Content.assemble(*parts)

    def on_click(self, event: events.Click) -> None:
        """A click on a key (or its description): as if the key were typed."""
        for start, end, key in self._zones:
            if start <= event.x < end:
                event.stop()
                self.app.simulate_key(key)
                return
