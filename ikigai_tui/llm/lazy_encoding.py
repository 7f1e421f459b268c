"""litellm's default tokenizer (cl100k_base), built on its first use rather than when a
request merely fetches it.

litellm fetches its default encoding on paths that never count with it: every request
to Anthropic passes it to the handler, every token count selects it before choosing the
model's own encoding. Building cl100k's tables holds the GIL ~80 ms (tiktoken's Rust
constructor), a freeze of the screen even from litellm's own thread. So the module that
holds it (litellm.litellm_core_utils.default_encoding) is imported with a stand-in that
builds the real encoding the first time something encodes with it (a provider's reply
without usage, counted by litellm). Its `name` is known without building it.
"""

from __future__ import annotations

import threading
from typing import Any

DEFAULT = "cl100k_base"
MODULE = "litellm.litellm_core_utils.default_encoding"


class LazyEncoding:
    """A tiktoken encoding built on first use; every attribute is the real encoding's."""

    def __init__(self, name: str, build: Any) -> None:
        self.name = name
        self._build = build
        self._real: Any = None
        self._lock = threading.Lock()

    @property
    def built(self) -> bool:
        return self._real is not None

    def real(self) -> Any:
        if self._real is None:
            with self._lock:
                if self._real is None:
                    self._real = self._build(self.name)
        return self._real

    def __getattr__(self, attr: str) -> Any:  # only for what is not set on the stand-in
        if attr.startswith("__"):
            raise AttributeError(attr)
        return getattr(self.real(), attr)

    def __repr__(self) -> str:
        return f"<LazyEncoding {self.name!r} {'built' if self.built else 'not built yet'}>"


def install() -> Any:
    """Import litellm's default-encoding module with a LazyEncoding in it (once; in the
    thread that imports litellm, before any request). Returns what the module holds."""
    import sys

    module = sys.modules.get(MODULE)
    if module is None:
        import importlib

        import tiktoken

        real_get = tiktoken.get_encoding
        me = threading.get_ident()

        def get_encoding(name: str) -> Any:
            if name == DEFAULT and threading.get_ident() == me:
                return LazyEncoding(name, real_get)
            return real_get(name)

        tiktoken.get_encoding = get_encoding  # only while that module runs
        try:
            module = importlib.import_module(MODULE)
        finally:
            tiktoken.get_encoding = real_get
    return module.encoding
