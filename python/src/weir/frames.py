"""Where the frames of a zstd file are, without decoding what is not read.

A zstd file is a sequence of frames (RFC 8878): zstd frames, each decoding to
its own bytes, and skippable frames, which decode to nothing. weir cuts its
input into independent frames and ends the file with a seek table (zstd's
seekable format, ``contrib/seekable_format``): a skippable frame listing every
frame's compressed and decompressed size, then a 9-byte footer. This module
turns any such file into a :class:`FrameIndex`: for each zstd frame, where it
is in the file and which bytes of the content it holds.

Sources of the index, best first:

1. The seek table at the end of the file, and the tables of the parts before
   it when the file is a concatenation of weir's files (``cat a.zst b.zst``):
   each table describes the frames that end where it begins, so the tables
   are followed back from the end, as ``weir -d --range`` does.
2. Frame headers, walked from the start (or from the last part without a
   table back to offset 0): a header may declare its content size, and the
   end of a frame is found by walking its block headers (3 bytes each),
   never by decoding.
3. A frame that declares no size (pzstd's, zstd's from a pipe) and that no
   seek table sizes is decoded once to be measured.

One rule, as ``weir`` applies it: a size declared in a frame header beats the
table, and a table that disagrees with a header (or with the checksum a frame
stores) is refused with :class:`FormatError`, naming the entry, the frame and
its offset; frames that declare no size take the table's size, as the
seekable format means (zstd's contrib reader, indexed_zstd and pyzstd do the
same), and every frame a read decodes is checked against it
(:class:`weir.zstd.FrameDecoding`). A table that lies about a frame whose
header declares no size is only found by decoding that frame (``weir -t``
decodes them all). A table whose offsets do not fit the file falls back to
walking the headers.
"""

from __future__ import annotations

import bisect
import struct
from collections.abc import Callable
from dataclasses import dataclass

from weir.errors import FormatError
from weir.seek_table import (
    SKIPPABLE_HEADER_SIZE,
    SKIPPABLE_MAGIC,
    SKIPPABLE_MASK,
    ZSTD_MAGIC,
    ReadAt,
    SeekTable,
    entry_impossibility,
    read_seek_table,
)
from weir.zstd import measure_frame

# The largest block a frame may hold (zstd's Block_Maximum_Size, 128 KiB).
MAX_BLOCK_SIZE = 128 << 10

ReadMany = Callable[[list[tuple[int, int]]], list[bytes]]
"""Reads several (offset, length) pieces of the compressed file at once (an
object store takes them as concurrent ranged requests)."""


@dataclass(frozen=True)
class Frame:
    """One zstd frame: its bytes in the file and the content it decodes to."""

    offset: int
    """Where the frame starts in the compressed file."""
    size: int
    """The frame's size in the compressed file."""
    start: int
    """Where its content starts in the decompressed content."""
    length: int
    """The size of its content."""
    checksum: int | None = None
    """The low 32 bits of XXH64 of its content, when the frame carries them."""
    index: int = 0
    """Its position among the file's frames, from 0 (skippable frames count,
    as ``weir -l`` numbers them)."""
    sized_by: str = "header"
    """What gave :attr:`length`: ``"header"``, ``"seek table entry"`` (the
    header declares none) or ``"measurement"`` (decoded when indexed)."""

    def where(self) -> str:
        """``frame N at offset O``, for messages."""
        return f"frame {self.index} at offset {self.offset}"


@dataclass(frozen=True)
class FrameHeader:
    """What a zstd frame header says (RFC 8878, 3.1.1.1)."""

    header_size: int
    content_size: int | None
    has_checksum: bool


@dataclass
class FrameIndex:
    """The zstd frames of a file, in order, and where the index came from."""

    frames: list[Frame]
    source: str
    """``"seek-table"``, ``"seek-tables"`` (a concatenation), ``"headers"``
    or ``"headers+seek-table"`` and so on: how the index was built."""

    def __post_init__(self) -> None:
        self._starts = [frame.start for frame in self.frames]

    @property
    def size(self) -> int:
        """The size of the decompressed content."""
        if not self.frames:
            return 0
        last = self.frames[-1]
        return last.start + last.length

    def covering(self, start: int, end: int) -> list[Frame]:
        """The frames holding content bytes ``[start, end)``, in order."""
        if start >= end or not self.frames:
            return []
        first = max(0, bisect.bisect_right(self._starts, start) - 1)
        found = []
        for frame in self.frames[first:]:
            if frame.start >= end:
                break
            if frame.start + frame.length > start:
                found.append(frame)
        return found


def parse_frame_header(data: bytes) -> FrameHeader:
    """Parses the header of the zstd frame that ``data`` starts with."""
    if len(data) < 5 or struct.unpack_from("<I", data)[0] != ZSTD_MAGIC:
        raise FormatError("not a zstd frame")
    descriptor = data[4]
    fcs_flag = descriptor >> 6
    single_segment = (descriptor >> 5) & 1
    if descriptor & 0x08:
        raise FormatError("a zstd frame header with its reserved bit set")
    has_checksum = bool((descriptor >> 2) & 1)
    dict_size = (0, 1, 2, 4)[descriptor & 3]
    fcs_size = (1 if single_segment else 0, 2, 4, 8)[fcs_flag]
    header_size = 5 + (0 if single_segment else 1) + dict_size + fcs_size
    if len(data) < header_size:
        raise FormatError("a zstd frame header cut short")
    content_size: int | None = None
    at = header_size - fcs_size
    if fcs_size == 1:
        content_size = data[at]
    elif fcs_size == 2:
        content_size = struct.unpack_from("<H", data, at)[0] + 256
    elif fcs_size == 4:
        content_size = struct.unpack_from("<I", data, at)[0]
    elif fcs_size == 8:
        content_size = struct.unpack_from("<Q", data, at)[0]
    return FrameHeader(header_size, content_size, has_checksum)


def walk_frame(read_at: ReadAt, offset: int, file_size: int) -> tuple[int, FrameHeader | None, int | None]:
    """The frame at ``offset``: its compressed size, its header (None for a
    skippable frame) and its checksum, found by walking its block headers."""
    head = read_at(offset, 18)
    if len(head) < 8:
        raise FormatError(f"a frame cut short at offset {offset}")
    magic = struct.unpack_from("<I", head)[0]
    if magic & SKIPPABLE_MASK == SKIPPABLE_MAGIC:
        size = SKIPPABLE_HEADER_SIZE + struct.unpack_from("<I", head, 4)[0]
        if offset + size > file_size:
            raise FormatError(f"a skippable frame at offset {offset} runs past the end of the file")
        return size, None, None
    header = parse_frame_header(head)
    at = offset + header.header_size
    while True:
        block = read_at(at, 3)
        if len(block) < 3:
            raise FormatError(f"the zstd frame at offset {offset} is cut short")
        value = block[0] | block[1] << 8 | block[2] << 16
        last, kind, block_size = value & 1, (value >> 1) & 3, value >> 3
        if kind == 3 or block_size > MAX_BLOCK_SIZE:
            raise FormatError(f"a damaged block header in the zstd frame at offset {offset}")
        at += 3 + (1 if kind == 1 else block_size)
        if last:
            break
    checksum = None
    if header.has_checksum:
        tail = read_at(at, 4)
        if len(tail) < 4:
            raise FormatError(f"the zstd frame at offset {offset} is cut short")
        checksum = struct.unpack("<I", tail)[0]
        at += 4
    if at > file_size:
        raise FormatError(f"the zstd frame at offset {offset} runs past the end of the file")
    return at - offset, header, checksum


def walk_frames(read_at: ReadAt, start: int, end: int, content_start: int = 0) -> list[Frame]:
    """The zstd frames from ``start`` to ``end``, from their headers; frames
    that declare no size are decoded to be measured."""
    frames = []
    offset, position, index = start, content_start, 0
    while offset < end:
        size, header, checksum = walk_frame(read_at, offset, end)
        if header is not None:
            length, sized_by = header.content_size, "header"
            if length is None:
                length = measure_frame(read_at(offset, size), f"frame {index} at offset {offset}")
                sized_by = "measurement"
            if length > 0:
                frames.append(Frame(offset, size, position, length, checksum, index, sized_by))
            position += length
        offset += size
        index += 1
    return frames


def _table_frames(
    table: SeekTable, read_many: ReadMany, first_index: int, content_start: int
) -> tuple[list[Frame], int]:
    """The frames ``table`` describes, numbered from ``first_index``, each
    entry checked against its frame's header and stored checksum (one small
    read per frame, all at once); and the content's end. Raises
    :class:`FormatError` where the table and a frame disagree."""
    pieces: list[tuple[int, int]] = []
    offset = table.data_start
    for compressed, _, _ in table.entries:
        pieces.append((offset, min(18, compressed)))
        # The frame's last 4 bytes: its stored checksum, when it has one.
        pieces.append((offset + compressed - 4, 4) if compressed >= 4 else (offset, 0))
        offset += compressed
    read = read_many(pieces)
    frames = []
    offset, position = table.data_start, content_start
    for number, (compressed, decompressed, listed_checksum) in enumerate(table.entries):
        index = first_index + number
        head, tail = read[2 * number], read[2 * number + 1]
        where = f"frame {index} at offset {offset}"

        def refuse(detail: str, number: int = number) -> FormatError:
            return FormatError(f"the seek table does not match the frames: entry {number} lists {detail}")

        magic = struct.unpack_from("<I", head)[0] if len(head) >= 4 else None
        if magic is not None and magic & SKIPPABLE_MASK == SKIPPABLE_MAGIC:
            declared = SKIPPABLE_HEADER_SIZE + struct.unpack_from("<I", head, 4)[0] if len(head) >= 8 else None
            if decompressed != 0:
                raise refuse(f"{decompressed} bytes of content, but {where} is a skippable frame")
            if declared != compressed:
                raise refuse(f"{compressed} compressed bytes, but {where} is a skippable frame of {declared}")
        else:
            try:
                header = parse_frame_header(head)
            except FormatError as error:
                raise refuse(f"a zstd frame, but {where} is not one ({error})") from error
            if header.content_size is not None and header.content_size != decompressed:
                raise refuse(f"{decompressed} bytes of content, but {where} declares {header.content_size}")
            impossible = entry_impossibility(compressed, decompressed)
            if impossible is not None:
                raise refuse(f"{impossible}: {where} is a zstd frame")
            checksum = None
            if header.has_checksum and len(tail) == 4:
                checksum = struct.unpack("<I", tail)[0]
                if listed_checksum is not None and listed_checksum != checksum:
                    raise refuse(f"the checksum {listed_checksum:08x}, but {where} ends with {checksum:08x}")
            if decompressed > 0:
                sized_by = "header" if header.content_size is not None else "seek table entry"
                frames.append(Frame(offset, compressed, position, decompressed, checksum, index, sized_by))
        position += decompressed
        offset += compressed
    return frames, position


def build_index(read_at: ReadAt, file_size: int, read_many: ReadMany | None = None) -> FrameIndex:
    """The index of a zstd file of ``file_size`` bytes (see the module's doc).
    ``read_many`` reads the pieces that check a table's entries (default:
    one ``read_at`` each)."""
    if read_many is None:

        def read_many(pieces: list[tuple[int, int]]) -> list[bytes]:
            return [read_at(offset, length) if length else b"" for offset, length in pieces]

    tables: list[SeekTable] = []
    end = file_size
    while end > 0:
        table = read_seek_table(read_at, end)
        if table is None:
            break
        tables.append(table)
        end = table.data_start
    tables.reverse()
    sources = []
    try:
        frames = walk_frames(read_at, 0, end) if end > 0 else []
    except FormatError:
        if not tables:
            raise
        # A table that merely looked right in the middle: walk it all.
        return FrameIndex(walk_frames(read_at, 0, file_size), "headers")
    if end > 0:
        sources.append("headers")
    position = frames[-1].start + frames[-1].length if frames else 0
    # Every frame and table before the first table's frames: the numbering's start.
    index = _frame_count(read_at, 0, end) if end > 0 else 0
    for table in tables:
        described, position = _table_frames(table, read_many, index, position)
        frames += described
        index += len(table.entries) + 1  # and the table's own frame
    if tables:
        sources.append("seek-table" if len(tables) == 1 else "seek-tables")
    return FrameIndex(frames, "+".join(sources) or "empty")


def _frame_count(read_at: ReadAt, start: int, end: int) -> int:
    """How many frames (skippable ones too) lie from ``start`` to ``end``."""
    count, offset = 0, start
    while offset < end:
        offset += walk_frame(read_at, offset, end)[0]
        count += 1
    return count
