"""Token counts computed once and kept: what a meter must count before it measures.

Each message's raw count depends only on the message (immutable) and the counter's
family (a tiktoken encoding, or the bytes/4 estimate), so it is counted once per family
and kept in the store (the TokenCounts port, in blocks). Before a measure, `fill` gives
the meter every count it lacks: kept ones read back, the rest counted, in a worker thread
when there are many (the event loop keeps its turn: keys, streams, the screen), and kept
in turn. Opening a log counted before reads its counts and counts nothing; an old log, or
a switch to a model of another encoding, is counted once, off the loop. Loading the
encoding itself (tiktoken, 0.2 s) happens in a thread too.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from array import array
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ikigai_tui.core.tokens.counts import sorted_pairs
from ikigai_tui.core.ports import StoreError, TokenBlock

if TYPE_CHECKING:
    from ikigai_tui.core.replay.bodies import Bodies
    from ikigai_tui.core.ports import TokenCounts
    from ikigai_tui.core.replay.replayer import Replayer
    from ikigai_tui.core.tokens.counter import TokenCounter
    from ikigai_tui.core.tokens.window import ContextMeter

log = logging.getLogger(__name__)

INLINE = 64  # fewer messages than this are counted on the loop (a few ms at most)
KEEP_AT = 256  # new counts are kept once this many are waiting (smaller blocks: recounted)
BLOCK = 8192  # the most messages in one kept block
REBUILD_OFF_LOOP = 4_000  # a meter's recount of this many messages runs in a thread (~5 ms)
_SWAP = sys.byteorder != "little"


def pack(counts: list[tuple[int, float]]) -> TokenBlock:
    """A block of (id, raw count), ids ascending, little-endian."""
    counts.sort()
    ids = array("q", (i for i, _ in counts))
    tokens = array("d", (t for _, t in counts))
    if _SWAP:
        ids.byteswap()
        tokens.byteswap()
    return TokenBlock(ids.tobytes(), tokens.tobytes())


def unpack(blocks: list[TokenBlock], wanted: Sequence[int]) -> tuple[array, array]:
    """The kept counts of the `wanted` ids, as sorted (ids, counts) arrays (a block kept
    twice: the same counts). Compact all along: no dict or float object per message."""
    every_id, every_count = array("q"), array("d")
    for block in blocks:
        every_id.frombytes(block.ids)
        every_count.frombytes(block.tokens)
    if _SWAP:
        every_id.byteswap()
        every_count.byteswap()
    if len(every_id) == len(wanted) and every_id == array("q", wanted):
        return every_id, every_count  # the blocks hold exactly the wanted ids (compared in C)
    want = set(wanted)
    found_ids, found_counts = array("q"), array("d")
    for block in blocks:
        ids, tokens = array("q"), array("d")
        ids.frombytes(block.ids)
        tokens.frombytes(block.tokens)
        if _SWAP:
            ids.byteswap()
            tokens.byteswap()
        for i, t in zip(ids, tokens):
            if i in want:
                found_ids.append(i)
                found_counts.append(t)
    if all(found_ids[k] < found_ids[k + 1] for k in range(len(found_ids) - 1)):
        return found_ids, found_counts
    return sorted_pairs(zip(found_ids, found_counts))


async def _off_loop(fn, *args, many: bool):
    return await asyncio.to_thread(fn, *args) if many else fn(*args)


async def fill(meter: ContextMeter, replayer: Replayer, store: TokenCounts | None,
               texts: Sequence[str] = (), bodies: Bodies | None = None) -> None:
    """Give `meter` the count of every message its next measure needs, and of the
    `texts` outside the log it measures (system prompt, tools, pins). Messages to count
    are read from `bodies` when the replayer holds outlines."""
    if meter.filling is None:
        meter.filling = asyncio.Lock()
    async with meter.filling:  # one fill at a time: a second one finds what the first did
        await _fill_texts(meter.counter, store, texts)
        await _fill(meter, replayer, store, bodies)
        if meter.stale(replayer) and len(replayer.ctx) >= REBUILD_OFF_LOOP:
            await meter.rebuild_off_loop(replayer)


def digest(text: str) -> str:
    from hashlib import sha256  # first needed after the first frame: not at start-up

    return sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


async def _load(counter: TokenCounter) -> None:
    """The encoding, loaded in a thread. Building tiktoken's tables holds the GIL for
    ~0.4 s all the same: which is why counts are kept, so that a log counted before
    is opened without loading it."""
    if not counter.loaded:
        await asyncio.to_thread(counter.load)


async def _fill_texts(counter: TokenCounter, store: TokenCounts | None,
                      texts: Sequence[str]) -> None:
    unknown = [t for t in dict.fromkeys(texts) if t not in counter.known]
    if not unknown or not counter.exact:
        return  # estimates: bytes/4 of a few texts, nothing to keep
    digests = {t: digest(t) for t in unknown}
    if store is not None:
        try:
            kept = await store.text_tokens(counter.family, digests.values())
        except StoreError as exc:
            log.warning("kept token counts unreadable: %s", exc)
            kept = {}
        for t in unknown:
            if digests[t] in kept:
                counter.known[t] = kept[digests[t]]
        unknown = [t for t in unknown if t not in counter.known]
    if not unknown:
        return
    await _load(counter)
    counts = await asyncio.to_thread(lambda: [counter.text(t) for t in unknown])
    counter.known.update(zip(unknown, counts))
    if store is not None and not getattr(store, "readonly", False):
        try:
            await store.save_text_tokens(counter.family, {digests[t]: c for t, c in zip(unknown, counts)})
        except StoreError as exc:
            log.warning("token counts not kept: %s", exc)


async def _missing(meter: ContextMeter, replayer: Replayer) -> list[int]:
    """meter.missing(replayer); a whole long context is looked up in a thread (over a
    copy of its keys: an int64 array, made at once). A tool result whose output is
    cleared is not: the meter counts its stub, never kept as the message's count."""
    if not meter.stale(replayer) or len(replayer.ctx) < REBUILD_OFF_LOOP:
        missing = meter.missing(replayer)
    else:
        missing = await asyncio.to_thread(meter.cache.absent, replayer.ctx.key_array())
    cleared = replayer.cleared
    return [k for k in missing if k not in cleared] if cleared else missing


async def _fill(meter: ContextMeter, replayer: Replayer, store: TokenCounts | None,
                bodies: Bodies | None) -> None:
    counter = meter.counter
    missing = await _missing(meter, replayer)
    if not missing:
        return
    many = len(missing) >= INLINE
    if many and store is not None:
        try:
            blocks = await store.token_blocks(counter.family, min(missing), max(missing))
        except StoreError as exc:  # counted again below: nothing is lost
            log.warning("kept token counts unreadable: %s", exc)
            blocks = []
        if blocks:
            ids, counts = await _off_loop(unpack, blocks, missing, many=True)
            await _off_loop(meter.cache.add_sorted, ids, counts,
                            many=len(ids) >= REBUILD_OFF_LOOP)
            if len(ids):
                missing = await _off_loop(meter.cache.absent, missing,
                                          many=len(missing) >= REBUILD_OFF_LOOP)
    if not missing:
        return
    await _load(counter)
    ctx = replayer.ctx
    keys = [k for k in missing if k in ctx]  # the context may have changed meanwhile
    if bodies is None:
        await _count(meter, [(k, ctx[k]) for k in keys])
    else:  # read and counted a batch at a time: the texts never all live at once
        async for full in bodies.chunks(replayer, keys):
            await _count(meter, list(full.items()))
    if len(meter.unsaved) >= KEEP_AT and store is not None:
        await keep(meter, store)


async def _count(meter: ContextMeter, entries: list[tuple[int, tuple]]) -> None:
    pairs = [(e[1], e[2]) for _k, e in entries]
    sizes = await _off_loop(meter.counter.messages, pairs, many=len(pairs) >= INLINE)
    counted = [(k, size) for (k, _e), size in zip(entries, sizes)]
    meter.cache.update(counted)
    meter.unsaved.extend(counted)


async def keep(meter: ContextMeter, store: TokenCounts) -> None:
    """Keep the meter's new counts in the store (a read-only log: they are not kept)."""
    unsaved, meter.unsaved = meter.unsaved, []
    if getattr(store, "readonly", False):
        return
    family = meter.counter.family
    try:
        for i in range(0, len(unsaved), BLOCK):
            part = unsaved[i:i + BLOCK]
            block = await _off_loop(pack, part, many=len(part) >= INLINE)
            await store.save_token_block(family, block)
    except StoreError as exc:  # a full disk, say: the counts are recounted next time
        log.warning("token counts not kept: %s", exc)
