"""The status line at the top of the screen: the focused agent, its model, the database
and, while its server is lost, that line (StoreTrouble)."""

from __future__ import annotations

from rich.text import Text

from ikigai_tui.tui.safe_text import sanitize
from ikigai_tui.tui.widgets.one_line import OneLine


class StatusLine(OneLine):
    """The status line (its text: status_text)."""


def status_text(label: str, model: str, db_label: str, trouble: str | None) -> Text:
    offline = " model, no network" if model == "offline" else ""
    line = Text(f" ikigai · {sanitize(label)} · {model}{offline} · {db_label}")
    if trouble:
        line.append(f" · {sanitize(trouble)}", style="bold red")
    return line
