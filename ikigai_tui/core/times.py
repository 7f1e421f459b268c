"""Times said relative to now ("just now", "5 minutes ago") are computed when shown.

A line kept in the log says when something was made as a local date and time
("(made 2026-11-27 14:02:05)"), which stays true whenever it is read; whoever shows it
to a person turns that into "(made at 14:02, 5 minutes ago)" against the clock of that
moment (`relative_times`). Pure: no I/O, no imports beyond the standard library."""

from __future__ import annotations

import re
import time

__all__ = ["STAMP", "relative_times", "when"]

STAMP = "%Y-%m-%d %H:%M:%S"
_MADE = re.compile(r"\(made (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\)")


def relative_times(line: str, now: float) -> str:
    """Each "(made <STAMP>)" in `line` as "(made at 14:02, 5 minutes ago)" relative to `now`."""
    def say(match: re.Match) -> str:
        try:
            ts = time.mktime(time.strptime(match.group(1), STAMP))
        except (ValueError, OverflowError):
            return match.group(0)
        return f"(made {when(ts, now)})"

    return _MADE.sub(say, line) if "(made " in line else line


def when(ts: float, now: float) -> str:
    """`at 14:02, 5 minutes ago`; the date too when it was not today."""
    age = max(0.0, now - ts)
    local, today = time.localtime(ts), time.localtime(now)
    same_day = local[:3] == today[:3]
    clock = time.strftime("%H:%M" if same_day else "%Y-%m-%d %H:%M", local)
    if age < 60:
        ago = "just now"
    elif age < 3600:
        ago = _plural(int(age // 60), "minute") + " ago"
    elif age < 86400:
        ago = _plural(int(age // 3600), "hour") + " ago"
    else:
        ago = _plural(int(age // 86400), "day") + " ago"
    return f"at {clock}, {ago}"


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"
