"""A desktop notification through the terminal (the config's `notify`), when an agent no
pane shows comes to need the user.

Two escape sequences exist, neither standard: OSC 9 (``ESC ] 9 ; text BEL``, iTerm2's;
also WezTerm, ghostty) and OSC 777 (``ESC ] 777 ; notify ; title ; body BEL``, rxvt's
extension, taken up by VTE as Fedora patches it, foot, WezTerm, ghostty). A terminal that
knows neither may print them, so `auto` writes one only where the terminal says who it is:

- ``TERM_PROGRAM=iTerm.app``: OSC 9;
- ``TERM_PROGRAM`` WezTerm or ghostty, ``TERM`` foot..., ``VTE_VERSION`` 4600 or more (VTE
  since then ignores an OSC 777 it does not show): OSC 777;
- anything else (kitty has its own OSC 99, Terminal.app and Alacritty none): nothing.

Inside tmux the terminal outside is not known (tmux sets TERM_PROGRAM to itself), so
`auto` writes nothing there; `osc9` or `osc777`, the user naming the terminal, are wrapped
in tmux's DCS passthrough when the pane's ``allow-passthrough`` is on (tmux 3.3 and later;
off by default, and then tmux would drop it), and nothing is written otherwise.

The text is the agent's name and its news, made safe: no control character, nor the
``;`` that ends OSC 777's fields, reaches the terminal from what an agent wrote.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Mapping

from ikigai_tui.tui.safe_text import sanitize

__all__ = ["SETTINGS", "protocol", "sequence", "tmux_passes"]

SETTINGS = ("off", "auto", "osc9", "osc777")
TITLE = "ikigai"
MOST = 200  # characters of a notification's text


def _auto(env: Mapping[str, str]) -> str | None:
    program = env.get("TERM_PROGRAM", "")
    if program == "iTerm.app":
        return "osc9"
    if program in ("WezTerm", "ghostty") or env.get("TERM", "").startswith("foot"):
        return "osc777"
    try:
        vte = int(env.get("VTE_VERSION", ""))
    except ValueError:
        vte = 0
    return "osc777" if vte >= 4600 else None


def protocol(setting: str, env: Mapping[str, str],
             passes: Callable[[Mapping[str, str]], bool] | None = None) -> tuple[str, bool] | None:
    """(the sequence to write, whether to wrap it for tmux), or None to write nothing.
    `passes` says whether tmux lets a wrapped sequence through (default: asks tmux)."""
    if setting not in ("auto", "osc9", "osc777"):
        return None
    inside_tmux = bool(env.get("TMUX"))
    if setting == "auto":
        return None if inside_tmux else (None if (found := _auto(env)) is None else (found, False))
    if not inside_tmux:
        return setting, False
    return (setting, True) if (passes or tmux_passes)(env) else None


def tmux_passes(env: Mapping[str, str]) -> bool:
    """Whether this tmux pane lets DCS passthrough out (``allow-passthrough`` on or all)."""
    command = ["tmux", "show-options", "-Apv"]
    if env.get("TMUX_PANE"):
        command += ["-t", env["TMUX_PANE"]]
    try:
        done = subprocess.run([*command, "allow-passthrough"], capture_output=True, text=True,
                              timeout=2, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0 and done.stdout.strip() in ("on", "all")


def _clean(text: str) -> str:
    """One line, no control character (sanitize shows them as symbols), no ``;``."""
    line = " ".join(sanitize(text).split()).replace(";", ",")
    return line if len(line) <= MOST else line[:MOST - 1] + "…"


def sequence(kind: str, body: str, tmux: bool = False) -> str:
    """The escape sequence that shows `body` as a desktop notification."""
    if kind == "osc9":
        raw = f"\x1b]9;{_clean(f'{TITLE}: {body}')}\x07"
    else:
        raw = f"\x1b]777;notify;{TITLE};{_clean(body)}\x07"
    if tmux:  # tmux's passthrough: every ESC inside doubled
        return "\x1bPtmux;" + raw.replace("\x1b", "\x1b\x1b") + "\x1b\\"
    return raw
