"""Freed big buffers go back to the system (glibc). Dependency-free; a no-op elsewhere.

glibc's malloc serves a block of 128 KiB or more with a mapping of its own, returned on
free, but once such a block is freed it raises that threshold to the block's size (up
to 32 MiB): later blocks of that size come from the heap, which seldom shrinks. So after
a 10 MB message is read, stored and sent, the process keeps tens of MB it no longer
uses, and each next big step (the request, the reply) adds to them instead of reusing
them. A fixed threshold keeps every block of 1 MiB or more in its own mapping
(benchmarks/big_message.py: 119 MiB above idle without it, 93 with it). Small blocks are
untouched; a big one costs one mmap and munmap, nothing next to filling it.
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
import threading
import weakref
from collections.abc import Iterator

M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter number
BIG_BLOCK = 1 << 20

_set = False


def return_big_blocks() -> bool:
    """Make glibc map each block of BIG_BLOCK bytes or more on its own. True if done."""
    global _set
    if _set:
        return True
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION"):
            return False
    except (ValueError, OSError, AttributeError):  # not glibc, or no confstr (Windows)
        return False
    try:
        import ctypes

        _set = bool(ctypes.CDLL(None).mallopt(M_MMAP_THRESHOLD, BIG_BLOCK))
    except (OSError, AttributeError):
        return False
    return _set


def freeze_imported() -> None:
    """Leave what is loaded so far out of every later garbage collection (gc.freeze).

    Modules, classes and functions live as long as the program, yet a full collection
    walks every one of them: with litellm loaded that is ~350,000 objects and a pause of
    0.1-0.4 s on whichever thread collects, the event loop's included. Called once an
    import has settled (the app's first frame, litellm's preload, Markdown's), so the
    collector walks only what the program makes afterwards. Objects frozen are never freed,
    so it is called after imports, not after reading a log."""
    gc.freeze()


_frozen_at_start = False


def freeze_at_start() -> None:
    """freeze_imported() once per process, as the first app is made: what the imports
    made so far (textual, rich, the core: ~200,000 objects) leaves the collector's walks,
    so the full collection the start sets off walks only what came after. Once: an app
    made later (tests make many) must not freeze what the earlier ones left."""
    global _frozen_at_start
    if not _frozen_at_start:
        _frozen_at_start = True
        freeze_imported()



_pause_lock = threading.Lock()
_pauses = 0
_was_enabled = False


class _FreezeAtEachImport:
    """A meta-path finder that finds nothing: at each import it freezes what was made so
    far, so that a collection while a load runs walks only what came since the last import."""

    @staticmethod
    def find_spec(*_args: object) -> None:
        gc.freeze()
        return None


_FREEZER = _FreezeAtEachImport()


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """For a long load in a background thread (litellm's import and first request: ~350,000
    objects that live as long as the program).

    While a load grows the heap the cyclic collector runs full collections over all of it,
    each longer than the last (20, 60, 100, ... 175 ms while litellm loads), holding the GIL
    all along: the event loop freezes that long, whichever thread set it off. So the
    collector is off during the load and what it made is frozen at the end (out of every
    later walk). Each import also freezes what came before it, for when another part turns
    the collector back on meanwhile (a log's replay pauses it too, and resumes it when
    done). Nested and concurrent uses count: the collector is back on when the last ends,
    if it was on before the first began. Objects frozen are never collected, so it wraps
    loads, not work that makes garbage."""
    global _pauses, _was_enabled
    with _pause_lock:
        if _pauses == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
            sys.meta_path.insert(0, _FREEZER)  # type: ignore[arg-type]
        _pauses += 1
    try:
        yield
    finally:
        with _pause_lock:
            _pauses -= 1
            if _pauses == 0:
                if _FREEZER in sys.meta_path:
                    sys.meta_path.remove(_FREEZER)  # type: ignore[arg-type]
                gc.freeze()
                if _was_enabled:
                    gc.enable()


# -- while a reply streams ------------------------------------------------------------

# While a reply streams: young collections after 3,000 new objects (700 by default) and a
# middle one after 5 of them (10), so that what lives a few frames (the lines a repaint
# draws, in reference cycles through their caches) dies young instead of piling up in the
# oldest generation; a full collection after 50 middle ones (10): ~10x the objects made.
STREAMING_THRESHOLDS = (3_000, 5, 50)

_defer_lock = threading.RLock()  # re-entered when a collection inside it drops an owner
_deferring: dict[int, weakref.ref] = {}  # id(owner) -> owner, weakly
_saved_thresholds: tuple[int, int, int] | None = None  # put aside while deferring


def defer_full_collections(owner: object) -> None:
    """Full collections put off while `owner` (a scrollback) streams a reply, until
    `resume_full_collections(owner)` (or until the owner is gone).

    A streaming reply's lines (Strips, each with seven caches of its own) live until the
    reply ends, up to ~90,000 objects at 1,000 lines, and every repaint leaves cycles that
    outlive a young collection; by default a full collection comes after every ten middle
    ones and walks all of it: 10-40 ms on the event loop, every ~0.3 s of a fast stream
    (benchmarks/stall_figures.py, stall_stream_ms). With STREAMING_THRESHOLDS, young
    collections still run (1-5 ms each) and most of that garbage dies in them; a full one
    still comes now and then, so the garbage of a very long reply stays bounded. Calls
    are idempotent."""
    global _saved_thresholds
    key = id(owner)
    with _defer_lock:
        if key in _deferring:
            return
        if _saved_thresholds is None:
            _saved_thresholds = gc.get_threshold()
            gc.set_threshold(*STREAMING_THRESHOLDS)
        _deferring[key] = weakref.ref(owner, lambda _ref: _release(key))


def resume_full_collections(owner: object) -> bool:
    """`owner`'s reply ended. True when it was the last one streaming: the full
    collection put off is due, and `collect` runs it and gives the collector its own
    thresholds back (until then a full one still waits, rather than fall in the
    middle of the end's drawing: the counts of young collections are past the default)."""
    return _release(id(owner), restore=False)


def _release(key: int, *, restore: bool = True) -> bool:
    global _saved_thresholds
    with _defer_lock:
        if _deferring.pop(key, None) is None or _deferring or _saved_thresholds is None:
            return False
        if restore:  # the owner is gone without a word: nothing will call collect()
            gc.set_threshold(*_saved_thresholds)
            _saved_thresholds = None
        return True


def full_collections_deferred() -> bool:
    return bool(_deferring)


def collect() -> int:
    """The full collection put off while replies streamed, and the collector's own
    thresholds back; nothing while a reply streams again."""
    global _saved_thresholds
    with _defer_lock:
        if _deferring or _saved_thresholds is None:
            return 0
        gc.set_threshold(*_saved_thresholds)
        _saved_thresholds = None
    return gc.collect() if gc.isenabled() else 0


def trim() -> bool:
    """Give the free pages in the middle of the heap back to the system (glibc's
    malloc_trim). Opening a long log makes and frees many blocks of 0.1-1 MB (copies of
    the context, arrays as they grow) between the ones that live on; their pages stay
    resident until trimmed (~2 MB at 100,000 messages). A few ms. True if done."""
    if not return_big_blocks():  # not glibc
        return False
    try:
        import ctypes

        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        return False
    return True
