"""The member index of a ``.tar.zst`` that weir wrote (docs/members.md).

When weir compresses a tar stream it writes, just before the seek table, a
skippable frame (magic ``0x184D2A5B``) that lists every member of the tar:
its name, its metadata as ``tar tvf`` shows it, and where its headers, data
and padding lie in the content. The seek table lists that frame as an entry
of decompressed size 0, so the index is found from the table alone, without
reading the frames. This module finds and parses it; :mod:`weir.archive`
opens members with it.

Two layouts are read (docs/members.md, "Its content"): version 2, what weir
writes since issue 68 (an uncompressed header, then one zstd frame of blocks
of columns), and version 1, what it wrote before (one zstd frame of rows).
The byte after ``WEIRTARI`` tells them apart: ``0x28``, a zstd frame's
magic, is version 1.

A damaged index (a bad magic, a varint that runs past the end, a checksum
that fails, offsets that run past the content, a column that holds fewer or
more values than its members) is refused with :class:`FormatError` naming
the file and the index frame's offset: never an index half believed. The
offsets themselves are trusted as the seek table is, and checked where a
member is read: its header block must parse and name the member's path.
"""

from __future__ import annotations

import struct

from weir.errors import FormatError
from weir.member_columns import parse_columns
from weir.member_records import INDEX_TAG, Member, MemberIndex, decode_record_frame, parse_member_index
from weir.seek_table import SKIPPABLE_HEADER_SIZE, ReadAt, read_seek_table

__all__ = [
    "INDEX_TAG",
    "MEMBER_INDEX_MAGIC",
    "Member",
    "MemberIndex",
    "parse_index_content",
    "parse_member_index",
    "read_member_index",
]

MEMBER_INDEX_MAGIC = 0x184D2A5B
# A zstd frame's magic starts with this byte: right after the tag, it is version 1.
_ZSTD_FIRST_BYTE = 0x28


def parse_index_content(content: bytes) -> MemberIndex:
    """The members of an index frame's content after its ``WEIRTARI`` tag:
    version 1 when it starts with a zstd frame (byte ``0x28``), else
    version 2's header and columns."""
    if not content:
        raise FormatError("it holds no record list")
    if content[0] == _ZSTD_FIRST_BYTE:
        return parse_member_index(decode_record_frame(content))
    return parse_columns(content)


def read_member_index(read_at: ReadAt, file_size: int, name: str) -> MemberIndex | None:
    """The member index of the compressed file of ``file_size`` bytes that
    ``read_at`` reads (``name`` names it in errors): the entry just before
    its seek table, of decompressed size 0, whose magic is the index's.
    None when the file has no seek table or no index before it."""
    table = read_seek_table(read_at, file_size)
    if table is None or not table.entries:
        return None
    compressed, decompressed, _ = table.entries[-1]
    offset = table.table_offset - compressed
    if decompressed != 0 or compressed < SKIPPABLE_HEADER_SIZE:
        return None
    frame = read_at(offset, compressed)
    if len(frame) != compressed or struct.unpack_from("<I", frame)[0] != MEMBER_INDEX_MAGIC:
        return None
    try:
        declared = struct.unpack_from("<I", frame, 4)[0]
        if SKIPPABLE_HEADER_SIZE + declared != compressed:
            raise FormatError(f"its frame declares {declared} bytes of content, its seek table entry {compressed - 8}")
        if frame[8:16] != INDEX_TAG:
            raise FormatError(f"its content starts with {frame[8:16]!r}, not {INDEX_TAG!r}")
        index = parse_index_content(frame[16:])
    except FormatError as error:
        raise FormatError(f"{name}: the member index at offset {offset} is damaged: {error}") from error
    return MemberIndex(index.members, index.end_offset, index.content_size, index.ended_early, offset)
