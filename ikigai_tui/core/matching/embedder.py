"""What the local matcher needs from an embedding model (the model itself lives outside
the core, in ikigai_tui/embed/, and is handed in by whoever builds the matcher)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol


class Embedder(Protocol):
    """Static text embeddings computed on the CPU, with no network.

    `name` keys the stored vectors: a different model (or dimension) never reads another's.
    """

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> tuple[Any, Any]:
        """(means, counts): a float32 array (len(texts), dim), each row the mean of the
        text's token vectors (zeros for a text with no tokens), and an int array of token
        counts. Blocking and CPU-bound: the matcher calls it in a worker thread."""
        ...
