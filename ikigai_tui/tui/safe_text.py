"""Make untrusted text inert before it reaches the terminal.

Text shown by the TUI may come from an LLM, a tool or a file. A raw ESC, CSI (0x9b) or
OSC sequence in it could move the cursor, change the title or write the clipboard
(OSC 52). `sanitize` replaces every control character except newline and tab with a
visible placeholder, so such a sequence shows up as harmless text:

- C0 controls 0x00-0x1f (except ``\\n`` and ``\\t``): the Unicode control picture
  U+2400 + code, e.g. ESC -> ``␛``, BEL -> ``␇``, CR -> ``␍``;
- DEL 0x7f: ``␡``;
- C1 controls 0x80-0x9f (single-character CSI, OSC, ...): ``�`` (U+FFFD), as they have
  no control pictures.

Always combine it with plain rendering (``rich.text.Text`` or ``Content``, never markup):
`plain` does both.
"""

from __future__ import annotations

import re

from rich.style import StyleType
from rich.text import Text

__all__ = ["C1_PLACEHOLDER", "plain", "sanitize"]

C1_PLACEHOLDER = "\ufffd"

_TABLE: dict[int, str] = {code: chr(0x2400 + code) for code in range(0x20)}
del _TABLE[ord("\n")]
del _TABLE[ord("\t")]
_TABLE[0x7F] = "\u2421"
_TABLE.update({code: C1_PLACEHOLDER for code in range(0x80, 0xA0)})
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def sanitize(text: str) -> str:
    """Return `text` with control characters (but newline and tab) made visible and inert."""
    if _CONTROL.search(text) is None:
        return text
    return text.translate(_TABLE)


def plain(text: str, style: StyleType = "") -> Text:
    """A rich `Text` of sanitized `text`, never parsed as markup."""
    return Text(sanitize(text), style=style)
