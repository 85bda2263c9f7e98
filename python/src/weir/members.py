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
import sys
from dataclasses import dataclass

from weir.errors import FormatError
from weir.frames import SKIPPABLE_HEADER_SIZE, ReadAt, parse_frame_header, read_seek_table

if sys.version_info >= (3, 14):
    from compression.zstd import ZstdDecompressor, ZstdError
else:
    from backports.zstd import ZstdDecompressor, ZstdError

__all__ = [
    "MEMBER_INDEX_MAGIC",
    "Member",
    "MemberIndex",
    "parse_index_content",
    "parse_member_index",
    "read_member_index",
]

MEMBER_INDEX_MAGIC = 0x184D2A5B
INDEX_TAG = b"WEIRTARI"
INDEX_VERSION = 1
"""The version of the record list :func:`parse_member_index` reads (rows)."""
COLUMNS_VERSION = 2
"""The version of the columns :func:`parse_index_content` reads after its header."""
# A zstd frame's magic starts with this byte: right after the tag, it is version 1.
_ZSTD_FIRST_BYTE = 0x28
# The most content a zstd frame of n bytes can hold: a 3-byte RLE block
# header stands for at most 128 KiB (the Swift reader's bound).
MAX_EXPANSION = 43_691
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


def _check(member: Member, number: int, end: int, end_offset: int) -> None:
    """What every member (ending at ``end``) must hold, in either version."""
    if end > end_offset:
        raise FormatError(f"member {number} ({member.name}) ends at {end}, past the end offset {end_offset}")
    if member.header_length == 0 or member.header_length % _BLOCK:
        raise FormatError(
            f"member {number} ({member.name}) has {member.header_length} bytes of headers, not whole tar blocks"
        )
    if member.mode > 0o7777:
        raise FormatError(f"member {number} ({member.name}) has the mode {member.mode:o}, past 7777")


def parse_member_index(records: bytes) -> MemberIndex:
    """The members of a decoded version 1 record list (docs/members.md,
    "Version 1")."""
    reader = _Records(records)
    try:
        version = reader.uvarint()
        if version != INDEX_VERSION:
            raise FormatError(
                f"version {version}, which this reader does not know in a record list of rows "
                f"(a zstd frame right after {INDEX_TAG.decode()} holds version {INDEX_VERSION})"
            )
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
        end = header_offset + header_length + data_length
        _check(member, number, end, end_offset)
        members.append(member)
    if reader.at != len(records):
        raise FormatError(f"{len(records) - reader.at} bytes follow the last member's record")
    return MemberIndex(members, end_offset, content_size, bool(flags & ENDED_EARLY))


# Version 2's columns, in the order a block stores them (docs/members.md, "Version 2").
_COLUMNS = (
    "gap",
    "header blocks",
    "data extra",
    "size byte 0",
    "size byte 1",
    "size byte 2",
    "size high",
    "mtime",
    "type",
    "mode",
    "uid",
    "gid",
    "path pop",
    "path rest",
    "link",
    "uname",
    "gname",
    "device",
)
_DEVICES = (ord("3"), ord("4"))
_SLASH = ord("/")
_INT64 = 1 << 63


def _unzigzag(value: int) -> int:
    return (value >> 1) ^ -(value & 1)


def _uvarints(column: bytes, count: int, name: str) -> list[int]:
    """The ``count`` uvarints that ``column`` must hold, exactly."""
    if len(column) == count and max(column, default=0) < 0x80:
        return list(column)  # every value under 128: the common case, at C speed
    values: list[int] = []
    at, size = 0, len(column)
    for _ in range(count):
        value = shift = 0
        while True:
            if at >= size:
                raise FormatError(f"the {name} column ends before its members do")
            byte = column[at]
            at += 1
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                break
            shift += 7
            if shift > 63:
                raise FormatError(f"the {name} column holds a varint of more than 64 bits")
        if value >= 1 << 64:
            raise FormatError(f"the {name} column holds a varint of more than 64 bits")
        values.append(value)
    if at != size:
        raise FormatError(f"the {name} column holds {size - at} bytes past its members")
    return values


def _bytes(column: bytes, count: int, name: str) -> bytes:
    """The ``count`` one-byte values that ``column`` must hold, exactly."""
    if len(column) < count:
        raise FormatError(f"the {name} column ends before its members do")
    if len(column) > count:
        raise FormatError(f"the {name} column holds {len(column) - count} bytes past its members")
    return column


def _texts(column: bytes, count: int, name: str) -> list[bytes]:
    """The ``count`` NUL-ended strings that ``column`` must hold, exactly."""
    parts = column.split(b"\0")
    if len(parts) - 1 < count:
        raise FormatError(f"the {name} column ends before its members do")
    if len(parts) - 1 > count or parts[-1]:
        past = len(column) - sum(len(part) + 1 for part in parts[:count])
        raise FormatError(f"the {name} column holds {past} bytes past its members")
    return parts[:count]


def _names(column: bytes, count: int, name: str) -> list[bytes | None]:
    """An owner's or group's column: each member's name, or None for the previous member's."""
    out: list[bytes | None] = []
    at, size = 0, len(column)
    for _ in range(count):
        if at >= size:
            raise FormatError(f"the {name} column ends before its members do")
        mark = column[at]
        if mark == 0:
            out.append(None)
            at += 1
        elif mark == 1:
            end = column.find(b"\0", at + 1)
            if end < 0:
                raise FormatError(f"the {name} column ends before its members do")
            out.append(column[at + 1 : end])
            at = end + 1
        else:
            raise FormatError(f"the {name} column holds the mark {mark}, neither 0 (the previous name) nor 1")
    if at != size:
        raise FormatError(f"the {name} column holds {size - at} bytes past its members")
    return out


def _decode_stream(stream: bytes) -> bytes:
    """The content of the one zstd frame ``stream`` must be, exactly, with
    its checksum; its content size may be absent (it is written as members
    come), so the output is bounded by what so many bytes can hold."""
    header = parse_frame_header(stream)
    if not header.has_checksum:
        raise FormatError("its zstd frame lacks its checksum")
    limit = len(stream) * MAX_EXPANSION
    decompressor = ZstdDecompressor()
    try:
        content = decompressor.decompress(stream, limit + 1)
    except ZstdError as error:
        raise FormatError(f"its zstd frame does not decode: {error}") from error
    if len(content) > limit:
        raise FormatError(f"its zstd frame decodes to more than {len(stream)} compressed bytes can hold")
    if not decompressor.eof:
        raise FormatError("its zstd frame is cut short")
    if decompressor.unused_data:
        raise FormatError(f"{len(decompressor.unused_data)} bytes follow its zstd frame")
    return content


def _parse_columns(content: bytes) -> MemberIndex:
    """Version 2: ``content`` is what follows ``WEIRTARI`` (docs/members.md, "Version 2")."""
    head = _Records(content)
    try:
        version = head.uvarint()
        if version != COLUMNS_VERSION:
            raise FormatError(
                f"version {version}, which this reader does not know (it reads {INDEX_VERSION} and {COLUMNS_VERSION})"
            )
        flags, count, end_offset, content_size = head.uvarint(), head.uvarint(), head.uvarint(), head.uvarint()
    except _Malformed as error:
        raise FormatError(f"its header {error}") from error
    if end_offset > content_size:
        raise FormatError(f"the end offset {end_offset} passes the content size {content_size}")
    raw = _decode_stream(content[head.at :])
    members: list[Member] = []
    blocks = _Records(raw)
    # The member before the first: at offset 0, of empty names, mtime 0.
    end = mtime = 0
    path = uname = gname = b""
    slashes: list[int] = []  # where the previous path's '/' stand
    block = 0
    while blocks.at < len(raw):
        try:
            in_block = blocks.uvarint()
            lengths = [blocks.uvarint() for _ in _COLUMNS]
        except _Malformed as error:
            raise FormatError(f"block {block}'s header {error}") from error
        if in_block == 0 or in_block > len(raw):
            raise FormatError(f"block {block} declares {in_block} members in {len(raw)} bytes")
        if len(members) + in_block > count:
            raise FormatError(f"its blocks hold more members than the {count} it declares")
        columns: list[bytes] = []
        start = blocks.at
        for name, length in zip(_COLUMNS, lengths, strict=True):
            if start + length > len(raw):
                raise FormatError(f"block {block}'s {name} column runs past the end of the index")
            columns.append(raw[start : start + length])
            start += length
        blocks.at = start
        try:
            gaps = _uvarints(columns[0], in_block, _COLUMNS[0])
            header_blocks = _uvarints(columns[1], in_block, _COLUMNS[1])
            extras = _uvarints(columns[2], in_block, _COLUMNS[2])
            size0, size1, size2 = (_bytes(columns[n], in_block, _COLUMNS[n]) for n in (3, 4, 5))
            size_high = _uvarints(columns[6], in_block, _COLUMNS[6])
            mtimes = _uvarints(columns[7], in_block, _COLUMNS[7])
            types = _bytes(columns[8], in_block, _COLUMNS[8])
            modes, uids, gids, pops = (_uvarints(columns[n], in_block, _COLUMNS[n]) for n in (9, 10, 11, 12))
            rests, links = (_texts(columns[n], in_block, _COLUMNS[n]) for n in (13, 14))
            unames, gnames = (_names(columns[n], in_block, _COLUMNS[n]) for n in (15, 16))
            devices = iter(_uvarints(columns[17], 2 * sum(types.count(kind) for kind in _DEVICES), _COLUMNS[17]))
        except FormatError as error:
            raise FormatError(f"block {block}: {error}") from error
        for n in range(in_block):
            number = len(members)
            high, gap, blocks_less_one = size_high[n], gaps[n], header_blocks[n]
            if high >= 1 << 39 or gap >= 1 << 62 or blocks_less_one >= 1 << 40:
                raise FormatError(f"member {number}'s size or offsets are out of range")
            size = size0[n] | size1[n] << 8 | size2[n] << 16 | high << 24
            kind = types[n]
            predicted = (size + 511) & ~511 if kind in (0x30, 0x31) and size + 511 < _INT64 else 0
            data_length = predicted + _unzigzag(extras[n])
            if not 0 <= data_length < 1 << 62:
                raise FormatError(f"member {number}'s data length {data_length} is out of range")
            # The previous path's first `keep` folders, then the rest.
            pop = pops[n]
            if pop > len(slashes):
                raise FormatError(
                    f"member {number}'s path leaves {pop} folders of the previous path, which has {len(slashes)}"
                )
            keep = len(slashes) - pop
            cut = slashes[keep - 1] + 1 if keep else 0
            rest = rests[n]
            path = path[:cut] + rest
            del slashes[keep:]
            at = rest.find(b"/")
            while at >= 0:
                slashes.append(cut + at)
                at = rest.find(b"/", at + 1)
            mtime = (mtime + _unzigzag(mtimes[n]) + _INT64) % (1 << 64) - _INT64  # as Swift's &+
            uname = unames[n] if unames[n] is not None else uname
            gname = gnames[n] if gnames[n] is not None else gname
            major, minor = (next(devices), next(devices)) if kind in _DEVICES else (0, 0)
            header_offset = end + gap
            member = Member(
                path,
                header_offset,
                (blocks_less_one + 1) * _BLOCK,
                data_length,
                size,
                mtime,
                modes[n],
                uids[n],
                gids[n],
                bytes((kind,)),
                links[n],
                uname,
                gname,
                major,
                minor,
            )
            end = header_offset + member.header_length + data_length
            _check(member, number, end, end_offset)
            members.append(member)
        block += 1
    if len(members) != count:
        raise FormatError(f"it declares {count} members, but its columns hold {len(members)}")
    return MemberIndex(members, end_offset, content_size, bool(flags & ENDED_EARLY))


def _decode_index_frame(frame: bytes) -> bytes:
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


def parse_index_content(content: bytes) -> MemberIndex:
    """The members of an index frame's content after its ``WEIRTARI`` tag:
    version 1 when it starts with a zstd frame (byte ``0x28``), else
    version 2's header and columns."""
    if not content:
        raise FormatError("it holds no record list")
    if content[0] == _ZSTD_FIRST_BYTE:
        return parse_member_index(_decode_index_frame(content))
    return _parse_columns(content)


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
