"""Make untrusted text inert before it reaches the terminal (see `ikigai_tui.support.inert`).

Always combine `sanitize` with plain rendering (``rich.text.Text`` or ``Content``, never
markup): `plain` does both.
"""

from __future__ import annotations

from rich.style import StyleType
from rich.text import Text

from ikigai_tui.support.inert import C1_PLACEHOLDER, sanitize

__all__ = ["C1_PLACEHOLDER", "plain", "sanitize"]


def plain(text: str, style: StyleType = "") -> Text:
    """A rich `Text` of sanitized `text`, never parsed as markup."""
    return Text(sanitize(text), style=style)
