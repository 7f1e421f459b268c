"""Who counts a text's tokens with a tiktoken encoding: this process, or another one.

Building an encoding's tables holds the GIL from start to end: tiktoken's Rust
constructor (CoreBPE) takes 120-380 ms for o200k_base and ~65 ms for cl100k_base in one
call, which no thread switch interrupts (the parse of the .tiktoken file before it is
Python and lets other threads run). In a thread of the app it is a freeze of the screen
all the same. So the full-screen app plugs in (`use`) an encoder that counts in a worker
process (llm/token_worker.py): the tables are built there, and this process only sends
texts and reads counts back. Elsewhere (the command line, tests) the encoding is built
here, on first use (`LocalEncoder`).

An encoder counts a text as `TokenCounter.text` defines it: the sum of its slices' token
counts (core/tokens.py: `slices`), special tokens counted as text.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Protocol


class Encoder(Protocol):
    def count(self, text: str) -> int:
        """The token count of one text."""

    def counts(self, texts: Sequence[str]) -> list[int]:
        """The token count of each text."""


class LocalEncoder:
    """Counts with the encoding built in this process (core/tokens.py: load_encoding)."""

    def __init__(self, name: str) -> None:
        from ikigai_tui.core.tokens import load_encoding

        self.name = name
        self._encode = load_encoding(name).encode

    def count(self, text: str) -> int:
        from ikigai_tui.core.tokens import slices

        encode = self._encode
        return sum(len(encode(piece, disallowed_special=())) for piece in slices(text))

    def counts(self, texts: Sequence[str]) -> list[int]:
        count = self.count
        return [count(text) if text else 0 for text in texts]


_lock = threading.Lock()
_factory: Callable[[str], Encoder] = LocalEncoder
_encoders: dict[str, Encoder] = {}


def use(factory: Callable[[str], Encoder]) -> None:
    """Count with encoders made by `factory` from now on (one per encoding name). The
    encoders made before are closed (one still held starts a new worker if it counts again)."""
    global _factory
    with _lock:
        if factory is _factory:
            return
        _factory = factory
        made = list(_encoders.values())
        _encoders.clear()
    for old in made:  # a worker process ends here, not whenever its encoder is collected
        close = getattr(old, "close", None)
        if close is not None:
            close()


def factory() -> Callable[[str], Encoder]:
    return _factory


def encoder(name: str) -> Encoder:
    """The encoder of encoding `name`, made on first use (it may take a while: call it
    from a worker thread when the caller is an event loop)."""
    with _lock:
        made = _encoders.get(name)
        if made is None:
            made = _encoders[name] = _factory(name)
        return made
