"""Make untrusted text inert before it reaches a terminal, and JSON safe to print.

Text from a model, a tool, a provider or a file may hold escape sequences: OSC 52
writes the clipboard, OSC 0/2 the window title, OSC 8 makes links, `ESC c` resets the
terminal, CSI moves the cursor or clears the screen, a bare CR overwrites what a line
showed. Wherever a person may read text (the full-screen UI, stdout and stderr in text
mode), every control character but newline and tab is replaced by a visible
placeholder, so such a sequence shows up as harmless text:

- C0 controls 0x00-0x1f (but ``\\n`` and ``\\t``): the Unicode control picture
  U+2400 + code, e.g. ESC -> ``␛``, BEL -> ``␇``, CR -> ``␍``; a CR right before a
  newline (CRLF) is a line end, not an overwrite, and becomes a plain newline;
- DEL 0x7f: ``␡``;
- C1 controls 0x80-0x9f (single-character CSI, OSC, ...): ``�`` (U+FFFD), as they have
  no control pictures.

No dependencies: the command line uses it without loading rich or textual.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["C1_PLACEHOLDER", "dumps", "sanitize"]

C1_PLACEHOLDER = "\ufffd"

_TABLE: dict[int, str] = {code: chr(0x2400 + code) for code in range(0x20)}
del _TABLE[ord("\n")]
del _TABLE[ord("\t")]
_TABLE[0x7F] = "\u2421"
_TABLE.update({code: C1_PLACEHOLDER for code in range(0x80, 0xA0)})
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# json.dumps escapes C0 but writes DEL, C1 and the Unicode line separators raw.
_JSON_RAW = re.compile("[\x7f-\x9f\u2028\u2029]")


def sanitize(text: str) -> str:
    """`text` with control characters (but newline and tab) made visible and inert."""
    if _CONTROL.search(text) is None:
        return text
    return text.replace("\r\n", "\n").translate(_TABLE)


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def dumps(data: Any, **kwargs: Any) -> str:
    """JSON text with every control character escaped (``\\u009b``, never a raw C1), so
    it is exact for a program and inert on a terminal. Non-ASCII text stays readable."""
    text = json.dumps(data, ensure_ascii=False, **kwargs)
    # Such characters can only stand inside JSON strings, where the escape is exact.
    return _JSON_RAW.sub(_escape, text)
