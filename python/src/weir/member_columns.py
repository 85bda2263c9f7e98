"""Version 2 of the member index (docs/members.md, "Version 2"): an
uncompressed header, then one zstd frame of blocks of columns, each block's
columns holding exactly its members' values. What weir writes since issue 68.
"""

from __future__ import annotations

import sys

from weir.errors import FormatError
from weir.frames import parse_frame_header
from weir.member_records import (
    COLUMNS_VERSION,
    ENDED_EARLY,
    INDEX_VERSION,
    MAX_EXPANSION,
    TAR_BLOCK,
    Malformed,
    Member,
    MemberIndex,
    RecordReader,
    check_member,
)

if sys.version_info >= (3, 14):
    from compression.zstd import ZstdDecompressor, ZstdError
else:
    from backports.zstd import ZstdDecompressor, ZstdError

__all__ = ["parse_columns"]


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


def parse_columns(content: bytes) -> MemberIndex:
    """Version 2: ``content`` is what follows ``WEIRTARI`` (docs/members.md, "Version 2")."""
    head = RecordReader(content)
    try:
        version = head.uvarint()
        if version != COLUMNS_VERSION:
            raise FormatError(
                f"version {version}, which this reader does not know (it reads {INDEX_VERSION} and {COLUMNS_VERSION})"
            )
        flags, count, end_offset, content_size = head.uvarint(), head.uvarint(), head.uvarint(), head.uvarint()
    except Malformed as error:
        raise FormatError(f"its header {error}") from error
    if end_offset > content_size:
        raise FormatError(f"the end offset {end_offset} passes the content size {content_size}")
    raw = _decode_stream(content[head.at :])
    members: list[Member] = []
    blocks = RecordReader(raw)
    # The member before the first: at offset 0, of empty names, mtime 0.
    end = mtime = 0
    path = uname = gname = b""
    slashes: list[int] = []  # where the previous path's '/' stand
    block = 0
    while blocks.at < len(raw):
        try:
            in_block = blocks.uvarint()
            lengths = [blocks.uvarint() for _ in _COLUMNS]
        except Malformed as error:
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
                (blocks_less_one + 1) * TAR_BLOCK,
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
            check_member(member, number, end, end_offset)
            members.append(member)
        block += 1
    if len(members) != count:
        raise FormatError(f"it declares {count} members, but its columns hold {len(members)}")
    return MemberIndex(members, end_offset, content_size, bool(flags & ENDED_EARLY))
