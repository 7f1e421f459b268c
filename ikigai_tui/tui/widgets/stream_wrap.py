"""Word wrap for a reply while it streams into the scrollback."""

from __future__ import annotations

from rich.cells import cell_len

from ikigai_tui.tui.safe_text import sanitize


class StreamWrap:
    """Greedy word wrap, fed piece by piece: finished lines never change again."""

    def __init__(self, width: int) -> None:
        self.width = max(8, width)
        self.line = ""
        self.text = ""  # what was fed (the lines drawn), not what arrived after them
        self.more = 0  # characters that arrived after the lines drawn ran out

    def feed(self, piece: str) -> list[str]:
        self.text += piece
        done: list[str] = []
        for ch in sanitize(piece):
            if ch == "\n":
                done.append(self.line)
                self.line = ""
                continue
            self.line += ch
            if cell_len(self.line) > self.width:
                cut = self.line.rfind(" ")
                if cut <= 0:
                    done.append(self.line[:-1])
                    self.line = self.line[-1]
                else:
                    done.append(self.line[:cut])
                    self.line = self.line[cut + 1 :]
        return done
