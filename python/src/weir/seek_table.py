"""The seek table of zstd's seekable format (``contrib/seekable_format``),
as weir writes it at the end of its files: a skippable frame listing every
frame's compressed and decompressed size (and, optionally, a checksum), then
a 9-byte footer. Found from the end, checked against the bytes around it
(its magic, its size, a first frame where its entries put one), and the
sizes no zstd frame can have (:func:`entry_impossibility`). The frames it
describes are checked where they are read (:mod:`weir.frames`).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "SEEK_FOOTER_MAGIC",
    "SEEK_FOOTER_SIZE",
    "SEEK_TABLE_MAGIC",
    "SKIPPABLE_HEADER_SIZE",
    "SKIPPABLE_MAGIC",
    "SKIPPABLE_MASK",
    "ZSTD_MAGIC",
    "ReadAt",
    "SeekTable",
    "entry_impossibility",
    "find_seek_table",
    "most_compressed",
    "most_content",
    "read_seek_table",
    "seek_table_problem",
]

ZSTD_MAGIC = 0xFD2FB528
SKIPPABLE_MAGIC = 0x184D2A50
SKIPPABLE_MASK = 0xFFFFFFF0
SEEK_TABLE_MAGIC = 0x184D2A5E
SEEK_FOOTER_MAGIC = 0x8F92EAB1
SEEK_FOOTER_SIZE = 9
SKIPPABLE_HEADER_SIZE = 8

ReadAt = Callable[[int, int], bytes]
"""Reads ``length`` bytes at ``offset`` of the compressed file (fewer at its end)."""


@dataclass(frozen=True)
class SeekTable:
    """One seek table and the frames it describes."""

    table_offset: int
    """Where the table's skippable frame starts: its frames end there."""
    data_start: int
    """Where its first frame starts."""
    entries: list[tuple[int, int, int | None]]
    """(compressed size, decompressed size, checksum) per frame."""


def read_seek_table(read_at: ReadAt, end: int) -> SeekTable | None:
    """The seek table that ends at ``end``, or None if there is none there
    or it does not fit the bytes before it."""
    found = find_seek_table(read_at, end)
    return found if isinstance(found, SeekTable) else None


def seek_table_problem(read_at: ReadAt, end: int) -> str | None:
    """Why the bytes before ``end``, which end with the seek table's footer
    magic, are not a seek table that fits the file; None when they are one,
    or do not end with that magic (no table)."""
    found = find_seek_table(read_at, end)
    return found if isinstance(found, str) else None


def find_seek_table(read_at: ReadAt, end: int) -> SeekTable | str | None:
    """The seek table that ends at ``end``; None without the footer magic;
    why not, when the magic is there but the rest is not a table."""
    if end < SEEK_FOOTER_SIZE:
        return None
    footer = read_at(end - SEEK_FOOTER_SIZE, SEEK_FOOTER_SIZE)
    if len(footer) != SEEK_FOOTER_SIZE:
        return None
    count, descriptor, magic = struct.unpack("<IBI", footer)
    if magic != SEEK_FOOTER_MAGIC:
        return None
    footer_at = end - SEEK_FOOTER_SIZE
    if descriptor & 0x7C:
        return f"reserved bits set in its descriptor {descriptor:#04x} at offset {footer_at + 4}"
    with_checksums = bool(descriptor & 0x80)
    entry_size = 12 if with_checksums else 8
    frame_size = SKIPPABLE_HEADER_SIZE + count * entry_size + SEEK_FOOTER_SIZE
    table_offset = end - frame_size
    if table_offset < 0:
        return f"its footer at offset {footer_at} claims {count} frames, a table of {frame_size} bytes: past the file"
    raw = read_at(table_offset, frame_size)
    if len(raw) != frame_size:
        return f"the file ends before its table of {frame_size} bytes at offset {table_offset}"
    magic, declared = struct.unpack_from("<II", raw)
    if magic != SEEK_TABLE_MAGIC or declared != frame_size - SKIPPABLE_HEADER_SIZE:
        return (
            f"its table of {count} frames should begin at offset {table_offset} with the magic "
            f"{SEEK_TABLE_MAGIC:#010x} and the size {frame_size - SKIPPABLE_HEADER_SIZE}, "
            f"not {magic:#010x} and {declared}"
        )
    entries: list[tuple[int, int, int | None]] = []
    total = 0
    for i in range(count):
        at = SKIPPABLE_HEADER_SIZE + i * entry_size
        compressed, decompressed = struct.unpack_from("<II", raw, at)
        checksum = struct.unpack_from("<I", raw, at + 8)[0] if with_checksums else None
        entries.append((compressed, decompressed, checksum))
        total += compressed
    data_start = table_offset - total
    if data_start < 0:
        return (
            f"its {count} entries at offset {table_offset} list {total} compressed bytes, "
            f"more than the {table_offset} before it"
        )
    if count:
        magic_bytes = read_at(data_start, 4)
        if len(magic_bytes) < 4:
            return f"the file ends at offset {data_start}, where its first frame should start"
        first = struct.unpack("<I", magic_bytes)[0]
        if first != ZSTD_MAGIC and first & SKIPPABLE_MASK != SKIPPABLE_MAGIC:
            return f"its first entry puts a frame at offset {data_start}, where there is none (magic {first:#010x})"
    return SeekTable(table_offset, data_start, entries)


def most_compressed(content: int) -> int:
    """The most bytes a zstd frame of ``content`` bytes of content takes,
    whatever wrote it: a header of at most 18 bytes, a checksum of 4, and
    blocks of at least one byte each (but one empty last block), a raw block
    costing its 3-byte header more than its content. Far above zstd's
    ``ZSTD_compressBound``, which frames flushed every few bytes pass."""
    return 4 * content + 25


def most_content(compressed: int) -> int:
    """The most content a zstd frame of ``compressed`` bytes holds: each
    3-byte block header stands for at most 128 KiB (an RLE block)."""
    return compressed * 43_691


def entry_impossibility(compressed: int, decompressed: int) -> str | None:
    """Why no zstd frame can take ``compressed`` bytes for ``decompressed``
    bytes of content, from the sizes alone; None when one can. Only for a
    zstd frame: a skippable frame, of any size, has no content."""
    if compressed > most_compressed(decompressed):
        return (
            f"{compressed} compressed bytes for {decompressed} bytes of content, more than any zstd frame "
            f"takes for it (at most {most_compressed(decompressed)})"
        )
    if decompressed > most_content(compressed):
        return (
            f"{decompressed} bytes of content for {compressed} compressed bytes, more than any zstd frame "
            f"of that size holds (at most {most_content(compressed)})"
        )
    return None
