"""Reading table rows straight from an SQLite file's pages, for `check --recover`.

When a damaged interior page hides the leaves below it (the root page of the events
table, say), SQL reaches none of their rows although every one of them is intact. This
walks every page of the file, keeps the table leaves (https://www.sqlite.org/fileformat.html,
sections 1.6 and 2.1) and decodes their cells, overflow chains included. Only the main
file is read: in WAL mode it holds committed pages only (what the -wal holds, SQL reads).
Nothing here trusts the bytes: every offset, length and page number is checked.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from pathlib import Path

TABLE_LEAF = 13
MAX_OVERFLOW_PAGES = 1 << 20
Row = tuple[int, tuple]  # (rowid, column values)


class _Bad(Exception):
    """A cell or record that does not decode: skipped."""


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    value = 0
    for i in range(8):
        if pos + i >= len(buf):
            raise _Bad
        byte = buf[pos + i]
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, pos + i + 1
    if pos + 8 >= len(buf):
        raise _Bad
    return (value << 8) | buf[pos + 8], pos + 9


def _signed(value: int, bits: int) -> int:
    return value - (1 << bits) if value >= 1 << (bits - 1) else value


_INT_SIZES = {1: 1, 2: 2, 3: 3, 4: 4, 5: 6, 6: 8}


def record_types(payload: bytes) -> list[int]:
    """The serial types of a record (its header)."""
    size, pos = _varint(payload, 0)
    if not 1 <= size <= len(payload):
        raise _Bad
    types = []
    while pos < size:
        kind, pos = _varint(payload, pos)
        types.append(kind)
    if pos != size:
        raise _Bad
    return types


def decode_record(payload: bytes) -> tuple:
    size, _ = _varint(payload, 0)
    body = size
    values: list = []
    for kind in record_types(payload):
        if kind == 0:
            values.append(None)
        elif kind in _INT_SIZES:
            n = _INT_SIZES[kind]
            if body + n > len(payload):
                raise _Bad
            values.append(_signed(int.from_bytes(payload[body:body + n], "big"), 8 * n))
            body += n
        elif kind == 7:
            if body + 8 > len(payload):
                raise _Bad
            values.append(struct.unpack(">d", payload[body:body + 8])[0])
            body += 8
        elif kind in (8, 9):
            values.append(kind - 8)
        elif kind >= 12:
            n = (kind - 12) // 2
            if body + n > len(payload):
                raise _Bad
            raw = payload[body:body + n]
            if kind % 2:
                try:
                    values.append(raw.decode("utf-8"))
                except UnicodeDecodeError:
                    raise _Bad from None
            else:
                values.append(bytes(raw))
            body += n
        else:
            raise _Bad
    return tuple(values)


class PageFile:
    """The pages of an SQLite database file, read-only."""

    def __init__(self, path: Path) -> None:
        self.handle = open(path, "rb")
        header = self.handle.read(100)
        if len(header) < 100 or not header.startswith(b"SQLite format 3\x00"):
            raise OSError("no SQLite header")
        size = int.from_bytes(header[16:18], "big")
        self.page_size = 65536 if size == 1 else size
        if self.page_size < 512 or self.page_size & (self.page_size - 1):
            raise OSError("bad page size")
        self.usable = self.page_size - header[20]
        self.pages = max(0, self.handle.seek(0, 2) // self.page_size)

    def close(self) -> None:
        self.handle.close()

    def page(self, number: int) -> bytes:
        if not 1 <= number <= self.pages:
            raise _Bad
        self.handle.seek((number - 1) * self.page_size)
        return self.handle.read(self.page_size)

    def _payload(self, page: bytes, pos: int, size: int) -> bytes:
        usable = self.usable
        most = usable - 35
        if size <= most:
            local = size
        else:
            least = (usable - 12) * 32 // 255 - 23
            local = least + (size - least) % (usable - 4)
            if local > most:
                local = least
        if pos + local > usable:
            raise _Bad
        data = bytearray(page[pos:pos + local])
        if local == size:
            return bytes(data)
        if pos + local + 4 > usable:
            raise _Bad
        following = int.from_bytes(page[pos + local:pos + local + 4], "big")
        seen = 0
        while len(data) < size:
            seen += 1
            if following == 0 or seen > MAX_OVERFLOW_PAGES:
                raise _Bad
            chunk = self.page(following)
            following = int.from_bytes(chunk[:4], "big")
            data += chunk[4:usable][:size - len(data)]
        return bytes(data)

    def leaf_rows(self, wanted: Callable[[int, list[int]], bool]) -> Iterator[Row]:
        """(rowid, values) of every table-leaf cell that decodes and that `wanted(rowid,
        serial types)` accepts; pages and cells that do not decode are skipped."""
        for number in range(1, self.pages + 1):
            page = self.page(number)
            start = 100 if number == 1 else 0
            if page[start] != TABLE_LEAF:
                continue
            cells = int.from_bytes(page[start + 3:start + 5], "big")
            for i in range(cells):
                at = start + 8 + 2 * i
                if at + 2 > self.usable:
                    break
                try:
                    row = self._cell(page, int.from_bytes(page[at:at + 2], "big"), wanted)
                except _Bad:
                    continue
                if row is not None:
                    yield row

    def _cell(self, page: bytes, pos: int, wanted: Callable[[int, list[int]], bool]) -> Row | None:
        if not 8 <= pos < self.usable:
            raise _Bad
        size, pos = _varint(page, pos)
        rowid, pos = _varint(page, pos)
        rowid = _signed(rowid, 64)
        if size > 1 << 30:
            raise _Bad
        # The record header is in the page's local part: sort the cell out before
        # following its overflow chain.
        head = page[pos:min(pos + size, self.usable)]
        if not wanted(rowid, record_types(head) if head else []):
            return None
        return rowid, decode_record(self._payload(page, pos, size))
