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

import os

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
    import gc

    gc.freeze()
