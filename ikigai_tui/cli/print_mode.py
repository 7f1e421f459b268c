"""Where the command line writes text a person may read: stdout and stderr, inert.

Everything written here passes through `sanitize`, so model, tool and provider text
cannot drive the terminal (clipboard, title, links, screen), whether stdout is a
terminal or a pipe (pipes usually end on one: `| less -R`, `| tee`). Exact text is
for files and programs: `export --output FILE` and the JSON formats.

A terminal that went away (closed window, `| head` that stopped reading) makes writes
fail; the output is then dropped, never the work: a reply being saved must not die on
a print.
"""

from __future__ import annotations

import os
import sys
from typing import TextIO

from ikigai_tui.support.inert import sanitize


class Channel:
    """One output stream, written inertly; it goes quiet once the stream is gone."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.broken = False
        self._cr = False  # a CR that ended the last piece: CRLF or a bare CR?

    def write(self, text: str, *, flush: bool = True) -> None:
        """Write a piece of a stream (no newline added); CRLF split across pieces is a
        line end like any other."""
        if self._cr:
            text = "\r" + text
            self._cr = False
        if text.endswith("\r"):
            text, self._cr = text[:-1], True
        self._raw(sanitize(text), flush)

    def line(self, text: str = "") -> None:
        self.end()
        self._raw(sanitize(text) + "\n", True)

    def end(self) -> None:
        """A held CR that no LF followed is shown as the bare CR it was."""
        if self._cr:
            self._cr = False
            self._raw(sanitize("\r"), False)

    def _raw(self, text: str, flush: bool) -> None:
        if self.broken or not text and not flush:
            return
        try:
            self.stream.write(text)
            if flush:
                self.stream.flush()
        except (OSError, ValueError):  # EIO, EPIPE, a closed file
            self.broken = True
            silence(self.stream)


def silence(stream: TextIO) -> None:
    """Point a dead stream at /dev/null, so the interpreter's last flush of what is still
    buffered does not print a traceback at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def out() -> Channel:
    return Channel(sys.stdout)


def error(message: str, stream: TextIO | None = None) -> None:
    """One `Error:` line on stderr."""
    Channel(stream or sys.stderr).line(f"Error: {message}")
