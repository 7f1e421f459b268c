"""Kept token counts through the port: blocks of per-message counts kept per encoding and
found by the range of ids they hold; counts of texts outside the log kept by digest; a
read-only log keeps nothing and says so."""

from __future__ import annotations

import pytest

from ikigai_tui.core.ports import StoreError
from ikigai_tui.core.tokens.kept import pack, unpack as unpack_arrays


def unpack(blocks, wanted) -> dict:
    """The kept counts as a dict (unpack gives sorted arrays, ids ascending)."""
    ids, counts = unpack_arrays(blocks, wanted)
    assert list(ids) == sorted(set(ids))
    return dict(zip(ids, counts))
from tests.contract.test_event_log import with_agents


async def test_token_blocks_are_kept_per_encoding_and_found_by_id_range(backend):
    log = await with_agents(backend, "a")
    try:
        assert await log.token_blocks("o200k_base", 1, 100) == []
        first, second = pack([(3, 10.0), (1, 4.25), (2, 7.0)]), pack([(20, 3.0), (30, 99.5)])
        await log.save_token_block("o200k_base", first)
        await log.save_token_block("o200k_base", second)
        await log.save_token_block("bytes/4", pack([(1, 1.0)]))
        await log.save_token_block("o200k_base", pack([]))  # nothing to keep
        assert await log.token_blocks("o200k_base", 1, 100) == [first, second]
        assert await log.token_blocks("o200k_base", 2, 2) == [first]
        assert await log.token_blocks("o200k_base", 4, 19) == []
        assert await log.token_blocks("o200k_base", 25, 25) == [second]  # its range covers it
        assert unpack(await log.token_blocks("o200k_base", 1, 30), [1, 2, 3, 20, 30, 31]) == \
            {1: 4.25, 2: 7.0, 3: 10.0, 20: 3.0, 30: 99.5}
        assert unpack(await log.token_blocks("bytes/4", 0, 9), [1]) == {1: 1.0}
        with pytest.raises(ValueError):
            await log.save_token_block("o200k_base", type(first)(b"\0" * 8, b""))
        again = await backend.open()
        try:
            assert await again.token_blocks("o200k_base", 30, 30) == [second]
        finally:
            await again.close()
    finally:
        await log.close()


async def test_text_counts_are_kept_by_digest(backend):
    log = await with_agents(backend, "a")
    try:
        assert await log.text_tokens("o200k_base", ["d1"]) == {}
        await log.save_text_tokens("o200k_base", {"d1": 12.0, "d2": 3.0})
        await log.save_text_tokens("o200k_base", {"d1": 12.0})  # kept already: no error
        await log.save_text_tokens("cl100k_base", {"d1": 13.0})
        assert await log.text_tokens("o200k_base", ["d1", "d2", "d3", "d1"]) == {"d1": 12.0, "d2": 3.0}
        assert await log.text_tokens("cl100k_base", ["d1", "d2"]) == {"d1": 13.0}
        assert await log.text_tokens("o200k_base", []) == {}
    finally:
        await log.close()


async def test_a_read_only_log_keeps_no_counts(backend):
    log = await with_agents(backend, "a")
    await log.save_token_block("o200k_base", pack([(1, 2.0)]))
    await log.close()
    ro = await backend.open("log", readonly=True)
    try:
        assert unpack(await ro.token_blocks("o200k_base", 1, 1), [1]) == {1: 2.0}
        with pytest.raises(StoreError, match="read-only"):
            await ro.save_token_block("o200k_base", pack([(2, 2.0)]))
        with pytest.raises(StoreError, match="read-only"):
            await ro.save_text_tokens("o200k_base", {"d": 1.0})
    finally:
        await ro.close()
