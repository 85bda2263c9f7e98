"""The member index of a ``.tar.zst`` that weir wrote (docs/members.md).

When weir compresses a tar stream it writes, just before the seek table, a
skippable frame (magic ``0x184D2A5B``) that lists every member of the tar:
its name, its metadata as ``tar tvf`` shows it, and where its headers, data
and padding lie in the content. The seek table lists that frame as an entry
of decompressed size 0, so the index is found from the table alone, without
reading the frames. This module finds and parses it; :mod:`weir.archive`
opens members with it.

A damaged index (a bad magic, a varint that runs past the end, a checksum
that fails, offsets that run past the content) is refused with
:class:`FormatError` naming the file and the index frame's offset. The
offsets themselves are trusted as the seek table is, and checked where a
member is read: its header block must parse and name the member's path.
"""

from __future__ import annotations

import struct
import sys
from dataclasses import dataclass

from weir.errors import FormatError
from weir.frames import SKIPPABLE_HEADER_SIZE, ReadAt, parse_frame_header, read_seek_table

if sys.version_info >= (3, 14):
    from compression.zstd import ZstdDecompressor, ZstdError
else:
    from backports.zstd import ZstdDecompressor, ZstdError

__all__ = ["MEMBER_INDEX_MAGIC", "Member", "MemberIndex", "parse_member_index", "read_member_index"]

MEMBER_INDEX_MAGIC = 0x184D2A5B
INDEX_TAG = b"WEIRTARI"
INDEX_VERSION = 1
# Flags: bit 0, the tar stream ended early.
ENDED_EARLY = 1
# tar's block: every header is whole blocks.
_BLOCK = 512
# The fewest bytes a member's record takes (13 one-byte fields and its type byte).
_SMALLEST_RECORD = 14


@dataclass(frozen=True)
class Member:
    """One member of the tar, as the index lists it."""

    path: bytes
    """Its full name as tar stores it (a folder's ends with ``/``)."""
    header_offset: int
    """Where its first header block starts in the content."""
    header_length: int
    """Its header blocks' bytes (pax and GNU long-name blocks included)."""
    data_length: int
    """Its data and padding as they stand in the archive."""
    size: int
    mtime: int
    mode: int
    uid: int
    gid: int
    type: bytes
    """Tar's type flag, one byte: ``b"0"`` a file, ``b"5"`` a folder…"""
    link: bytes
    uname: bytes
    gname: bytes

    @property
    def data_offset(self) -> int:
        return self.header_offset + self.header_length

    @property
    def end(self) -> int:
        return self.data_offset + self.data_length

    @property
    def name(self) -> str:
        """The path as text: UTF-8, other bytes kept as surrogates (as tarfile)."""
        return self.path.decode("utf-8", "surrogateescape")


@dataclass(frozen=True)
class MemberIndex:
    """Every member of an archive, in archive order."""

    members: list[Member]
    end_offset: int
    """Where the tar's end blocks begin (or its content ends, if it ended early)."""
    content_size: int
    ended_early: bool
    offset: int = 0
    """Where the index's skippable frame starts in the compressed file."""


class _Malformed(FormatError):
    """A varint or string of the record list that does not fit it; the
    caller names the field's record."""


class _Records:
    """Reads the record list's varints and strings (kept lean: an index of
    80,000 members is a million varints)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.size = len(data)
        self.at = 0

    def uvarint(self) -> int:
        data, at = self.data, self.at
        if at >= self.size:
            raise _Malformed("runs past the end of the index")
        byte = data[at]
        if byte < 0x80:
            self.at = at + 1
            return byte
        value, shift = byte & 0x7F, 7
        while True:
            at += 1
            if at >= self.size:
                raise _Malformed("runs past the end of the index")
            byte = data[at]
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                self.at = at + 1
                return value
            shift += 7
            if shift > 63:
                raise _Malformed("holds a varint of more than 64 bits")

    def svarint(self) -> int:
        value = self.uvarint()
        return (value >> 1) ^ -(value & 1)

    def raw(self, length: int) -> bytes:
        at = self.at
        if at + length > self.size:
            raise _Malformed("runs past the end of the index")
        self.at = at + length
        return self.data[at : at + length]

    def string(self) -> bytes:
        return self.raw(self.uvarint())

    def front_coded(self, previous: bytes) -> bytes:
        shared = self.uvarint()
        if shared > len(previous):
            raise _Malformed(f"shares {shared} bytes of a name with the previous record's {len(previous)}")
        return previous[:shared] + self.string()


def parse_member_index(records: bytes) -> MemberIndex:
    """The members of a decoded record list (docs/members.md, "Its content")."""
    reader = _Records(records)
    try:
        version = reader.uvarint()
        if version != INDEX_VERSION:
            raise FormatError(f"version {version}, which this reader does not know (it reads {INDEX_VERSION})")
        flags, count, end_offset, content_size = reader.uvarint(), reader.uvarint(), reader.uvarint(), reader.uvarint()
    except _Malformed as error:
        raise FormatError(f"its header {error}") from error
    if count > len(records) // _SMALLEST_RECORD:
        raise FormatError(f"{count} members listed in {len(records)} bytes")
    if end_offset > content_size:
        raise FormatError(f"the end offset {end_offset} passes the content size {content_size}")
    members: list[Member] = []
    end = 0
    path = uname = gname = b""
    uvarint = reader.uvarint
    for number in range(count):
        try:
            header_offset = end + uvarint()
            header_length, data_length, size = uvarint(), uvarint(), uvarint()
            mtime = reader.svarint()
            mode, uid, gid = uvarint(), uvarint(), uvarint()
            kind = reader.raw(1)
            path = reader.front_coded(path)
            link = reader.string()
            uname = reader.front_coded(uname)
            gname = reader.front_coded(gname)
        except _Malformed as error:
            raise FormatError(f"member {number}'s record {error}") from error
        member = Member(
            path, header_offset, header_length, data_length, size, mtime, mode, uid, gid, kind, link, uname, gname
        )
        end = member.end
        if end > end_offset:
            raise FormatError(f"member {number} ({member.name}) ends at {end}, past the end offset {end_offset}")
        if header_length == 0 or header_length % _BLOCK:
            raise FormatError(
                f"member {number} ({member.name}) has {header_length} bytes of headers, not whole tar blocks"
            )
        members.append(member)
    if reader.at != len(records):
        raise FormatError(f"{len(records) - reader.at} bytes follow the last member's record")
    return MemberIndex(members, end_offset, content_size, bool(flags & ENDED_EARLY))


def _decode_index_frame(frame: bytes) -> bytes:
    """The record list that the index frame's content (after its tag) holds."""
    header = parse_frame_header(frame)
    if header.content_size is None or not header.has_checksum:
        raise FormatError("its zstd frame declares no content size or no checksum")
    decompressor = ZstdDecompressor()
    try:
        records = decompressor.decompress(frame, header.content_size + 1)
    except ZstdError as error:
        raise FormatError(f"its zstd frame does not decode: {error}") from error
    if not decompressor.eof:
        raise FormatError("its zstd frame is cut short")
    if decompressor.unused_data:
        raise FormatError(f"{len(decompressor.unused_data)} bytes follow its zstd frame")
    if len(records) != header.content_size:
        raise FormatError(f"its zstd frame decodes to {len(records)} bytes, not the {header.content_size} declared")
    return records


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
        index = parse_member_index(_decode_index_frame(frame[16:]))
    except FormatError as error:
        raise FormatError(f"{name}: the member index at offset {offset} is damaged: {error}") from error
    return MemberIndex(index.members, index.end_offset, index.content_size, index.ended_early, offset)
