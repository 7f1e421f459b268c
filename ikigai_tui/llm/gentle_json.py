"""json in small steps for one thread while it loads litellm.

litellm's import parses two big JSON files with the json module's C parser (its Anthropic
tokenizer, 1.7 MB: ~40 ms, then dumped back to a string: ~30 ms; the model map, 3 MB:
~20 ms). One C call holds the GIL from start to end, so the event loop, in another
thread, freezes that long (longer on a busy machine). The json module's pure-Python
parser and encoder give the same results and let other threads in every few
milliseconds (sys.getswitchinterval), at ~5x the CPU time, spent in the background.

`python_json_here()` makes json.loads/json.load/json.dumps with default arguments use
them in the calling thread only, for the duration; every other thread keeps the C code.
"""

from __future__ import annotations

import contextlib
import json
import json.decoder
import json.scanner
import threading
from collections.abc import Iterator
from typing import Any


class _PythonEncoder(json.JSONEncoder):
    def iterencode(self, o: Any, _one_shot: bool = False) -> Iterator[str]:
        return super().iterencode(o, _one_shot=False)  # one-shot is the C encoder


def _python_decoder() -> json.JSONDecoder:
    decoder = json.JSONDecoder()
    decoder.parse_string = json.decoder.py_scanstring  # type: ignore[attr-defined]
    decoder.scan_once = json.scanner.py_make_scanner(decoder)  # type: ignore[attr-defined]
    return decoder


class _PerThread:
    """Stands in for json's default decoder and encoder: Python's in one thread."""

    def __init__(self, ident: int, python: Any, c: Any) -> None:
        self._ident, self._python, self.c = ident, python, c

    def _pick(self) -> Any:
        return self._python if threading.get_ident() == self._ident else self.c

    def decode(self, s: str, *args: Any, **kwargs: Any) -> Any:
        return self._pick().decode(s, *args, **kwargs)

    def encode(self, o: Any) -> str:
        return self._pick().encode(o)

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.c, attr)


_lock = threading.Lock()


@contextlib.contextmanager
def python_json_here() -> Iterator[None]:
    """json's default loads/dumps in pure Python in this thread, meanwhile (not nested)."""
    me = threading.get_ident()
    with _lock:
        decoder = _PerThread(me, _python_decoder(), json._default_decoder)  # type: ignore[attr-defined]
        encoder = _PerThread(me, _PythonEncoder(), json._default_encoder)  # type: ignore[attr-defined]
        json._default_decoder = decoder  # type: ignore[attr-defined]
        json._default_encoder = encoder  # type: ignore[attr-defined]
    try:
        yield
    finally:
        with _lock:
            if json._default_decoder is decoder:  # type: ignore[attr-defined]
                json._default_decoder = decoder.c  # type: ignore[attr-defined]
            if json._default_encoder is encoder:  # type: ignore[attr-defined]
                json._default_encoder = encoder.c  # type: ignore[attr-defined]
