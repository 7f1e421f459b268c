"""Message vectors for the local matcher: kept in the store, held in memory once read.

A message's vector is computed once (the first time a match needs it) and kept through
the MatchIndex port, one block per computed batch; a matcher reads back the blocks that
cover its context and holds them, so the next query of the session neither reads nor
computes them.

A vector is kept as its direction in 8 bits (each unit-vector component x 127, rounded)
and its length (float32): 260 bytes a message at 256 dimensions, 26 MB for 100,000
messages, half of float16, and both reading them back and widening them to float32 take
half the time (a cosine moves by less than 0.005).
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
IDS, SCALE = np.dtype("<i8"), np.dtype("<f4")
FORMAT = "q8"  # in the key of the kept vectors: another encoding never reads these


def quantised(means: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(int8 directions, float32 scales): means ~= directions * scales[:, None]."""
    norms = np.linalg.norm(means, axis=1).astype(np.float32)
    units = means / np.maximum(norms, 1e-12)[:, None]
    return np.rint(units * 127).astype(np.int8), norms / 127


class VectorCache:
    """The vectors this process has read or computed, by message id."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.ids = np.empty(0, dtype=np.int64)  # sorted, unique
        self.vectors = np.empty((0, dim), dtype=np.int8)
        self.scales = np.empty(0, dtype=np.float32)
        self.tokens = np.empty(0, dtype=np.int64)

    def positions(self, ids: np.ndarray) -> np.ndarray:
        """Row of each id in the cache, -1 where it is not held."""
        if not self.ids.size:
            return np.full(ids.shape, -1, dtype=np.int64)
        at = np.minimum(np.searchsorted(self.ids, ids), self.ids.size - 1)
        return np.where(self.ids[at] == ids, at, -1)

    def add(self, ids: np.ndarray, tokens: np.ndarray, vectors: np.ndarray,
            scales: np.ndarray) -> None:
        """Hold more vectors; an id held already (or repeated) keeps its first vector."""
        if not ids.size:
            return
        if not self.ids.size and bool(np.all(ids[1:] > ids[:-1])):
            # The common first fill: sorted and unique already, no copy of the vectors.
            self.ids, self.tokens, self.vectors, self.scales = ids, tokens, vectors, scales
            return
        unique, first = np.unique(np.concatenate((self.ids, ids)), return_index=True)
        self.ids = unique
        self.tokens = np.concatenate((self.tokens, tokens))[first]
        self.vectors = np.concatenate((self.vectors, vectors))[first]
        self.scales = np.concatenate((self.scales, scales))[first]

    def add_blocks(self, blocks: list[VectorBlock], wanted: np.ndarray) -> None:
        """Hold the vectors of `wanted` ids found in the store's blocks."""
        if not blocks:
            return
        parts = [decoded(b, self.dim) for b in blocks]
        ids, tokens, vectors, scales = (np.concatenate(p) for p in zip(*parts))
        keep = True if np.array_equal(ids, wanted) else np.isin(ids, wanted)
        if keep is not True and not keep.all():
            ids, tokens, vectors, scales = ids[keep], tokens[keep], vectors[keep], scales[keep]
        if np.any(ids[1:] < ids[:-1]):  # blocks come sorted, in the order kept
            order = np.argsort(ids, kind="stable")
            ids, tokens, vectors, scales = ids[order], tokens[order], vectors[order], scales[order]
        self.add(ids.astype(np.int64), tokens.astype(np.int64), vectors, scales)


def decoded(block: VectorBlock, dim: int) -> tuple[np.ndarray, ...]:
    ids = np.frombuffer(block.ids, dtype=IDS)
    n = ids.size
    vectors = np.frombuffer(block.vectors, dtype=np.int8, count=n * dim).reshape(n, dim)
    scales = np.frombuffer(block.vectors, dtype=SCALE, offset=n * dim, count=n)
    return ids, np.frombuffer(block.tokens, dtype=IDS), vectors, scales


def block_of(ids: np.ndarray, tokens: np.ndarray, vectors: np.ndarray,
             scales: np.ndarray) -> VectorBlock:
    """The kept form: ids ascending; `vectors` holds the int8 directions, then the scales."""
    order = np.argsort(ids, kind="stable")
    return VectorBlock(ids[order].astype(IDS).tobytes(), tokens[order].astype(IDS).tobytes(),
                       vectors[order].tobytes() + scales[order].astype(SCALE).tobytes())


async def fill(cache: VectorCache, index: MatchIndex, embedder: Embedder,
               texts: Callable[[int], str], ids: np.ndarray, batch: int,
               progress: ProgressFn | None, check: Callable[[], None],
               counted: Callable[[int], None]) -> None:
    """Make the cache hold every id: read what the store keeps, compute (and keep) the
    rest in batches, telling `counted` how many after each batch."""
    missing = ids[cache.positions(ids) < 0]
    if not missing.size:
        return
    key = f"{embedder.name}/{FORMAT}"
    blocks = await index.message_vectors(key, int(missing.min()), int(missing.max()))
    cache.add_blocks(blocks, missing)
    missing = np.unique(missing[cache.positions(missing) < 0])
    computed: list[tuple[np.ndarray, ...]] = []
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
            vectors, scales = quantised(np.asarray(means, dtype=np.float32))
            counts = np.asarray(counts, dtype=np.int64)
            computed.append((part, counts, vectors, scales))
            counted(part.size)
            if keep:
                try:
                    await index.save_message_vectors(key, block_of(part, counts, vectors, scales))
                except StoreError as exc:  # read-only, full disk: still match, keep nothing
                    log.warning("message vectors not kept: %s", exc)
                    keep = False
            if progress is not None:
                progress(MatchProgress(done, total))
    finally:  # added once (each add copies the cache), cancelled or not
        if computed:
            cache.add(*(np.concatenate(parts) for parts in zip(*computed)))


def gathered(cache: VectorCache, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(int8 directions, float32 scales, token counts) of ids the cache holds, in their
    order."""
    ids = np.asarray(ids, dtype=np.int64)
    if np.array_equal(ids, cache.ids):  # the context is all the cache holds: no copy
        return cache.vectors, cache.scales, cache.tokens
    at = cache.positions(ids)
    return cache.vectors[at], cache.scales[at], cache.tokens[at]
