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
counts (`slices`), special tokens counted as text.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol


class Encoder(Protocol):
    def count(self, text: str) -> int:
        """The token count of one text."""

    def counts(self, texts: Sequence[str]) -> list[int]:
        """The token count of each text."""


def tokenizer_dir() -> Path | None:
    """The BPE files inside the installed litellm wheel, found without importing it."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(list(spec.submodule_search_locations)[0]) / "litellm_core_utils" / "tokenizers"
    return folder if folder.is_dir() else None


_loading = threading.Lock()  # the encodings built in this process (not the encoders' _lock)
_encodings: dict[str, Any] = {}


def load_encoding(name: str) -> Any:
    """A tiktoken encoding from local files. tiktoken downloads with no timeout when its
    cache misses, so the cache is pointed at the wheel's copies before the first call."""
    with _loading:
        if name not in _encodings:
            folder = tokenizer_dir()
            if folder is None:
                raise RuntimeError("litellm's tokenizer files are missing; reinstall ikigai")
            os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)
            os.environ["CUSTOM_TIKTOKEN_CACHE_DIR"] = str(folder)
            import tiktoken

            _encodings[name] = tiktoken.get_encoding(name)
        return _encodings[name]


SLICE = 1 << 16  # characters encoded at once: a token list costs ~36 bytes a token
_SEEK = 1 << 12  # how far back from a slice's end to look for a clean cut


def slices(text: str, size: int = SLICE) -> Iterable[str]:
    """`text` in pieces of about `size` characters whose token counts add up to the
    whole text's: each cut is just before a space that follows a non-space, and the
    tokenizers' pre-split (o200k, cl100k) never puts such a pair in one piece, so BPE
    never merges across it. Text with no such space within _SEEK characters is cut
    anyway (the count may then differ by a token per cut: ~1 in 16,000)."""
    if len(text) <= size:
        yield text
        return
    start = 0
    while len(text) - start > size:
        end = start + size
        low = max(start + 1, end - _SEEK)
        cut = text.rfind(" ", low, end)
        while cut > 0 and text[cut - 1].isspace():
            cut = text.rfind(" ", low, cut)
        if cut < low:
            cut = end
        yield text[start:cut]
        start = cut
    yield text[start:]


class LocalEncoder:
    """Counts with the encoding built in this process (load_encoding)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._encode = load_encoding(name).encode

    def count(self, text: str) -> int:
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
