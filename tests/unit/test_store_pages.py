"""Reading rows from an SQLite file's pages (store_pages, used by `check --recover`):
every serial type and overflow chains decode exactly as SQLite reads them, and a page of
garbage is skipped, never raised."""

from __future__ import annotations

import random
import sqlite3

from ikigai_tui.store.sqlite.pages import PageFile


def _table(path, rows) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (a, b, c)")
    conn.executemany("INSERT INTO t (rowid, a, b, c) VALUES (?, ?, ?, ?)", rows)
    conn.commit()
    conn.close()


def _values() -> list:
    rng = random.Random(7)
    ints = [0, 1, -1, 127, -128, 32767, -32768, 2**23 - 1, -2**23, 2**31 - 1, -2**31,
            2**47 - 1, -2**47, 2**63 - 1, -2**63]
    texts = ["", "é", "walrus " * 3, "x" * 5000, "".join(chr(rng.randrange(32, 0x2FFF)) for _ in range(9000))]
    return ints + [0.5, -1e300, None, b"", b"\x00\xff" * 3000] + texts


def test_every_row_decodes_as_sqlite_reads_it(tmp_path):
    values = _values()
    rows = [(i + 1, v, values[-i - 1], i * 1.25) for i, v in enumerate(values)]
    path = tmp_path / "t.db"
    _table(path, rows)
    pages = PageFile(path)
    try:
        found = {rowid: vals for rowid, vals in pages.leaf_rows(lambda rowid, types: len(types) == 3)}
    finally:
        pages.close()
    assert found == {r[0]: r[1:] for r in rows}


def test_a_garbage_page_is_skipped(tmp_path):
    path = tmp_path / "t.db"
    _table(path, [(i, f"row {i}" * 40, i, None) for i in range(1, 400)])
    size = 4096
    data = bytearray(path.read_bytes())
    rng = random.Random(3)
    for page in range(2, len(data) // size, 2):  # every other page: random bytes
        data[page * size:(page + 1) * size] = bytes(rng.randrange(256) for _ in range(size))
    path.write_bytes(bytes(data))
    pages = PageFile(path)
    try:
        found = list(pages.leaf_rows(lambda rowid, types: len(types) == 3))
    finally:
        pages.close()
    good = [(rowid, vals) for rowid, vals in found if vals == (f"row {rowid}" * 40, rowid, None)]
    assert good and len(good) < 399
