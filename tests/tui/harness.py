"""Shared bits of the widget harness tests: the terminal size, the widgets' stylesheet,
an app that pushes the screen under test, and optional screenshots (set
IKIGAI_WIDGET_SCREENSHOTS to a folder to look at them)."""

from __future__ import annotations

import os
from pathlib import Path

from textual.app import App
from textual.screen import Screen

from ikigai_tui.tui.styles_path import stylesheet

WIDGETS_CSS = stylesheet("widgets.tcss")
SIZE = (120, 40)
SCREENSHOTS = os.environ.get("IKIGAI_WIDGET_SCREENSHOTS")


def screenshot(app: App, name: str) -> None:
    if SCREENSHOTS:
        Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
        app.save_screenshot(filename=f"{name}.svg", path=SCREENSHOTS)


class Harness(App[None]):
    """Pushes one screen and records what it is dismissed with."""

    def __init__(self, under_test: Screen) -> None:
        super().__init__()
        self.under_test = under_test
        self.results: list[object] = []

    def on_mount(self) -> None:
        self.push_screen(self.under_test, self.results.append)
