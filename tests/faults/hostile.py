"""Hostile text: what a model, a tool, a provider or a file may send to a terminal."""

from __future__ import annotations

import base64
import re

from ikigai_tui.support.inert import sanitize

PAYLOADS = {
    "osc52_clipboard": "\x1b]52;c;" + base64.b64encode(b"rm -rf ~/PWNED").decode() + "\x07",
    "osc0_title": "\x1b]0;owned title\x07",
    "osc2_title_st": "\x1b]2;owned\x1b\\",
    "osc8_link": "\x1b]8;;http://evil.example/\x1b\\click\x1b]8;;\x1b\\",
    "clear_screen": "\x1b[2J\x1b[H",
    "reset": "\x1bc",
    "cursor_up": "\x1b[10A",
    "bell": "ding\x07",
    "c1_csi": "\x9b2J",
    "c1_osc": "\x9d0;c1 title\x9c",
    "bare_cr": "safe text\rEVIL",
    "nul_del": "nul\x00del\x7f",
}
ALL = " | ".join(PAYLOADS.values())

# Anything a terminal acts on: C0 but newline and tab, DEL, C1.
_RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def raw_controls(text: str) -> list[str]:
    return sorted({repr(ch) for ch in _RAW.findall(text)})


def assert_inert(text: str, where: str) -> None:
    found = raw_controls(text)
    assert found == [], f"{where}: raw control characters reached the output: {found}"


def shown(payload: str) -> str:
    """The visible, inert form of a payload, as every text output path must show it."""
    return sanitize(payload)


def neutralised(text: str, where: str) -> list[str]:
    """The payload names whose inert form appears in `text` (after checking that nothing
    raw did): proof that the text went through, shown, not dropped."""
    assert_inert(text, where)
    return sorted(name for name, payload in PAYLOADS.items() if shown(payload) in text)
