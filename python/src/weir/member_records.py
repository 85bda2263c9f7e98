"""What a member index holds (:class:`Member`, :class:`MemberIndex`), the
reader of its varints and strings, what every member must hold in either
version, and version 1's record list of rows (docs/members.md, "Version 1").
:mod:`weir.members` finds the index; :mod:`weir.member_columns` reads
version 2.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from weir.errors import FormatError
from weir.frames import parse_frame_header

if sys.version_info >= (3, 14):
    from compression.zstd import ZstdDecompressor, ZstdError
else:
    from backports.zstd import ZstdDecompressor, ZstdError

__all__ = [
    "COLUMNS_VERSION",
    "ENDED_EARLY",
    "INDEX_TAG",
    "INDEX_VERSION",
    "MAX_EXPANSION",
    "TAR_BLOCK",
    "Malformed",
    "Member",
    "MemberIndex",
    "RecordReader",
    "check_member",
    "decode_record_frame",
    "parse_member_index",
]

INDEX_TAG = b"WEIRTARI"
INDEX_VERSION = 1
"""The version of the record list :func:`parse_member_index` reads (rows)."""
COLUMNS_VERSION = 2
"""The version of the columns :func:`weir.member_columns.parse_columns` reads after its header."""
# The most content a zstd frame of n bytes can hold: a 3-byte RLE block
# header stands for at most 128 KiB (the Swift reader's bound).
MAX_EXPANSION = 43_691
# Flags: bit 0, the tar stream ended early.
ENDED_EARLY = 1
# tar's block: every header is whole blocks.
TAR_BLOCK = 512
# The fewest bytes a member's record takes (13 one-byte fields and its type byte).
SMALLEST_RECORD = 14


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
    devmajor: int = 0
    """A device's (types ``3`` and ``4``) major number; version 1 keeps none (0)."""
    devminor: int = 0

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


class Malformed(FormatError):
    """A varint or string of the record list that does not fit it; the
    caller names the field's record."""


class RecordReader:
    """Reads the record list's varints and strings (kept lean: an index of
    80,000 members is a million varints)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.size = len(data)
        self.at = 0

    def uvarint(self) -> int:
        data, at = self.data, self.at
        if at >= self.size:
            raise Malformed("runs past the end of the index")
        byte = data[at]
        if byte < 0x80:
            self.at = at + 1
            return byte
        value, shift = byte & 0x7F, 7
        while True:
            at += 1
            if at >= self.size:
                raise Malformed("runs past the end of the index")
            byte = data[at]
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                self.at = at + 1
                return value
            shift += 7
            if shift > 63:
                raise Malformed("holds a varint of more than 64 bits")

    def svarint(self) -> int:
        value = self.uvarint()
        return (value >> 1) ^ -(value & 1)

    def raw(self, length: int) -> bytes:
        at = self.at
        if at + length > self.size:
            raise Malformed("runs past the end of the index")
        self.at = at + length
        return self.data[at : at + length]

    def string(self) -> bytes:
        return self.raw(self.uvarint())

    def front_coded(self, previous: bytes) -> bytes:
        shared = self.uvarint()
        if shared > len(previous):
            raise Malformed(f"shares {shared} bytes of a name with the previous record's {len(previous)}")
        return previous[:shared] + self.string()


def check_member(member: Member, number: int, end: int, end_offset: int) -> None:
    """What every member (ending at ``end``) must hold, in either version."""
    if end > end_offset:
        raise FormatError(f"member {number} ({member.name}) ends at {end}, past the end offset {end_offset}")
    if member.header_length == 0 or member.header_length % TAR_BLOCK:
        raise FormatError(
            f"member {number} ({member.name}) has {member.header_length} bytes of headers, not whole tar blocks"
        )
    if member.mode > 0o7777:
        raise FormatError(f"member {number} ({member.name}) has the mode {member.mode:o}, past 7777")


def parse_member_index(records: bytes) -> MemberIndex:
    """The members of a decoded version 1 record list (docs/members.md,
    "Version 1")."""
    reader = RecordReader(records)
    try:
        version = reader.uvarint()
        if version != INDEX_VERSION:
            raise FormatError(
                f"version {version}, which this reader does not know in a record list of rows "
                f"(a zstd frame right after {INDEX_TAG.decode()} holds version {INDEX_VERSION})"
            )
        flags, count, end_offset, content_size = reader.uvarint(), reader.uvarint(), reader.uvarint(), reader.uvarint()
    except Malformed as error:
        raise FormatError(f"its header {error}") from error
    if count > len(records) // SMALLEST_RECORD:
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
        except Malformed as error:
            raise FormatError(f"member {number}'s record {error}") from error
        member = Member(
            path, header_offset, header_length, data_length, size, mtime, mode, uid, gid, kind, link, uname, gname
        )
        end = header_offset + header_length + data_length
        check_member(member, number, end, end_offset)
        members.append(member)
    if reader.at != len(records):
        raise FormatError(f"{len(records) - reader.at} bytes follow the last member's record")
    return MemberIndex(members, end_offset, content_size, bool(flags & ENDED_EARLY))


def decode_record_frame(frame: bytes) -> bytes:
    """The version 1 record list that the index frame's content (after its tag) holds."""
    header = parse_frame_header(frame)
    if header.content_size is None or not header.has_checksum:
        raise FormatError("its zstd frame declares no content size or no checksum")
    if header.content_size > len(frame) * MAX_EXPANSION:
        raise FormatError(f"its zstd frame declares {header.content_size} bytes, more than it can hold")
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
