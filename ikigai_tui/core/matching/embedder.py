"""What the local matcher needs from an embedding model (the model itself lives outside
the core, in ikigai_tui/embed/, and is handed in by whoever builds the matcher): a
session's own (Session.embedder), else the process's default, which the composition
root installs (runtime.open_session: `use(default_embedder)`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from ikigai_tui.core.errors import CommandError


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


def word_vectors(embedder: Embedder, words: Sequence[str]) -> Any:
    """Each word's vector, float32 (len(words), dim): the embedder's own `word_vectors`
    when it has one (a static table places a word without counting as a text embedded),
    else `embed` of the words."""
    own = getattr(embedder, "word_vectors", None)
    return own(words) if own is not None else embedder.embed(words)[0]


_factory: Callable[[], Embedder] | None = None


def use(factory: Callable[[], Embedder]) -> None:
    """Make the process's default embedder with `factory` from now on (cheap: a model
    loads on its first embed call)."""
    global _factory
    _factory = factory


def default() -> Embedder:
    """The process's default embedder; a one-line error when none was installed."""
    if _factory is None:
        raise CommandError("no embedding model is installed for the local matcher")
    return _factory()
