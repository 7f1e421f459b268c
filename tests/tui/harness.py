"""Shared bits of the widget harness tests: the terminal size, the widgets' stylesheet,
and optional screenshots (set IKIGAI_WIDGET_SCREENSHOTS to a folder to look at them)."""

from __future__ import annotations

import os
from pathlib import Path

from textual.app import App

import ikigai_tui

WIDGETS_CSS = Path(ikigai_tui.__file__).parent / "styles" / "widgets.tcss"
SIZE = (120, 40)
SCREENSHOTS = os.environ.get("IKIGAI_WIDGET_SCREENSHOTS")


def screenshot(app: App, name: str) -> None:
    if SCREENSHOTS:
        Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
        app.save_screenshot(filename=f"{name}.svg", path=SCREENSHOTS)
