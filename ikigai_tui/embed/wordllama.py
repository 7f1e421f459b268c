"""WordLlama static embeddings (l2_supercat, 256 dimensions), loaded from its own wheel.

WordLlama's vectors are a token table: a text's embedding is the mean of its tokens'
vectors. Its own `embed` pads every batch to its longest text (a batch with one long tool
output costs batch x that length x 256 floats); here each text is tokenized unpadded and
its tokens' rows summed, which gives the same vectors (to float rounding) at a fraction of
the memory. The weights and the tokenizer ship inside the wheel; the loader must be told
that its package folder is the cache (`cache_dir`), else it looks for the tokenizer in a
folder that does not exist and then tries the network, and `disable_download` so it never
does. Importing wordllama calls logging.basicConfig(INFO) (stderr lines in the TUI): a
placeholder handler on the root logger during the import makes that a no-op.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

CONFIG = "l2_supercat"
DIM = 256
# A text longer than this (characters) is embedded from its first MAX_CHARS: the meaning of
# a 10 MB tool output is in its start, and tokenizing all of it would take seconds.
MAX_CHARS = 20_000


class WordLlamaEmbedder:
    name = f"wordllama-{CONFIG}-{DIM}"
    dim = DIM

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._table: Any = None  # float32 (vocabulary, DIM)
        self._tokenizer: Any = None
        self.loads = 0  # how many times the model was loaded (tests)

    def _load(self) -> None:
        with self._lock:
            if self._table is not None:
                return
            model = load_model()
            import numpy as np

            self._table = np.ascontiguousarray(model.embedding, dtype=np.float32)
            tokenizer = model.tokenizer
            tokenizer.no_padding()
            tokenizer.no_truncation()
            self._tokenizer = tokenizer
            self.loads += 1

    def embed(self, texts: Sequence[str]) -> tuple[Any, Any]:
        import numpy as np

        if self._table is None:
            self._load()
        table = self._table
        means = np.zeros((len(texts), DIM), dtype=np.float32)
        counts = np.zeros(len(texts), dtype=np.int64)
        if not texts:
            return means, counts
        encoded = self._tokenizer.encode_batch([t[:MAX_CHARS] for t in texts],
                                               add_special_tokens=False)
        ids = [e.ids for e in encoded]
        counts[:] = [len(i) for i in ids]
        present = np.flatnonzero(counts)
        if present.size:
            flat = np.fromiter((t for i in ids for t in i), dtype=np.int64, count=int(counts.sum()))
            np.clip(flat, 0, table.shape[0] - 1, out=flat)
            starts = np.concatenate(([0], np.cumsum(counts[present])[:-1]))
            sums = np.add.reduceat(table[flat], starts, axis=0)
            means[present] = sums / counts[present, None]
        return means, counts


def package_dir() -> Path:
    """wordllama's installed folder, found without importing it."""
    import importlib.util

    spec = importlib.util.find_spec("wordllama")
    if spec is None or spec.origin is None:
        raise RuntimeError("the wordllama package is not installed")
    return Path(spec.origin).parent


def load_model() -> Any:
    root = logging.getLogger()
    placeholder = logging.NullHandler()
    added = not root.handlers
    if added:
        root.addHandler(placeholder)
    try:
        from wordllama import WordLlama
    finally:
        if added:
            root.removeHandler(placeholder)
    logging.getLogger("wordllama").setLevel(logging.WARNING)
    return WordLlama.load(CONFIG, cache_dir=package_dir(), dim=DIM, disable_download=True)
