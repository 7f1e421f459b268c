"""Message vectors for the local matcher: kept in the store, held in memory once read.

A message's vector is computed once (the first time a match needs it) and kept through
the MatchIndex port, one block per computed batch; a matcher reads back the blocks that
cover its context and holds them (float16, 512 bytes a message at 256 dimensions: 51 MB
for 100,000 messages), so the next query of the session neither reads nor computes them.
numpy is imported with this module, which local.py imports only when a match runs.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

import numpy as np

from ikigai_tui.core.matching import MatchProgress, ProgressFn
from ikigai_tui.core.matching.embedder import Embedder
from ikigai_tui.core.ports import MatchIndex, StoreError, VectorBlock
from ikigai_tui.core.provider import ProviderError

log = logging.getLogger(__name__)
IDS, HALF = np.dtype("<i8"), np.dtype("<f2")


class VectorCache:
    """The vectors this process has read or computed, by message id."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.ids = np.empty(0, dtype=np.int64)  # sorted, unique
        self.vectors = np.empty((0, dim), dtype=np.float16)
        self.tokens = np.empty(0, dtype=np.int64)

    def positions(self, ids: np.ndarray) -> np.ndarray:
        """Row of each id in the cache, -1 where it is not held."""
        if not self.ids.size:
            return np.full(ids.shape, -1, dtype=np.int64)
        at = np.minimum(np.searchsorted(self.ids, ids), self.ids.size - 1)
        return np.where(self.ids[at] == ids, at, -1)

    def add(self, ids: np.ndarray, tokens: np.ndarray, vectors: np.ndarray) -> None:
        """Hold more vectors; an id held already (or repeated) keeps its first vector."""
        if not ids.size:
            return
        if not self.ids.size and bool(np.all(ids[1:] > ids[:-1])):
            # The common first fill: sorted and unique already, no copy of the vectors.
            self.ids, self.tokens = ids, tokens
            self.vectors = vectors.astype(np.float16, copy=False)
            return
        all_ids = np.concatenate((self.ids, ids))
        unique, first = np.unique(all_ids, return_index=True)
        self.ids = unique
        self.tokens = np.concatenate((self.tokens, tokens))[first]
        self.vectors = np.concatenate((self.vectors, vectors.astype(np.float16)))[first]

    def add_blocks(self, blocks: list[VectorBlock], wanted: np.ndarray) -> None:
        """Hold the vectors of `wanted` ids found in the store's blocks."""
        if not blocks:
            return
        ids = np.concatenate([np.frombuffer(b.ids, dtype=IDS) for b in blocks])
        tokens = np.concatenate([np.frombuffer(b.tokens, dtype=IDS) for b in blocks])
        vectors = np.concatenate([np.frombuffer(b.vectors, dtype=HALF) for b in blocks])
        vectors = vectors.reshape(ids.size, self.dim)
        keep = np.isin(ids, wanted)
        if not keep.all():
            ids, tokens, vectors = ids[keep], tokens[keep], vectors[keep]
        order = np.argsort(ids, kind="stable")  # blocks come sorted, in the order kept
        if np.any(order[1:] < order[:-1]):
            ids, tokens, vectors = ids[order], tokens[order], vectors[order]
        self.add(ids.astype(np.int64), tokens.astype(np.int64), vectors)


def block_of(ids: np.ndarray, tokens: np.ndarray, vectors: np.ndarray) -> VectorBlock:
    order = np.argsort(ids, kind="stable")
    return VectorBlock(ids[order].astype(IDS).tobytes(), tokens[order].astype(IDS).tobytes(),
                       vectors[order].astype(HALF).tobytes())


async def fill(cache: VectorCache, index: MatchIndex, embedder: Embedder,
               texts: Callable[[int], str], ids: np.ndarray, batch: int,
               progress: ProgressFn | None, check: Callable[[], None],
               counted: Callable[[int], None]) -> None:
    """Make the cache hold every id: read what the store keeps, compute (and keep) the
    rest in batches, telling `counted` how many after each batch."""
    missing = ids[cache.positions(ids) < 0]
    if not missing.size:
        return
    blocks = await index.message_vectors(embedder.name, int(missing.min()), int(missing.max()))
    cache.add_blocks(blocks, missing)
    missing = np.unique(missing[cache.positions(missing) < 0])
    computed: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    total = (missing.size + batch - 1) // batch
    keep = True
    try:
        for done, start in enumerate(range(0, missing.size, batch), 1):
            check()
            part = missing[start:start + batch]
            try:
                means, counts = await asyncio.to_thread(embedder.embed, [texts(int(i)) for i in part])
            except Exception as exc:  # a model that cannot load: one line for the user
                raise ProviderError(f"local matcher: the embedding model failed: {exc}") from exc
            halves = np.asarray(means, dtype=np.float16)
            counts = np.asarray(counts, dtype=np.int64)
            computed.append((part, counts, halves))
            counted(part.size)
            if keep:
                try:
                    await index.save_message_vectors(embedder.name, block_of(part, counts, halves))
                except StoreError as exc:  # read-only, full disk: still match, keep nothing
                    log.warning("message vectors not kept: %s", exc)
                    keep = False
            if progress is not None:
                progress(MatchProgress(done, total))
    finally:  # added once (each add copies the cache), cancelled or not
        if computed:
            cache.add(*(np.concatenate(parts) for parts in zip(*computed)))


def gathered(cache: VectorCache, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(float16 vectors, token counts) of ids the cache holds, in their order."""
    at = cache.positions(np.asarray(ids, dtype=np.int64))
    return cache.vectors[at], cache.tokens[at]
