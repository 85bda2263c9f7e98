"""The weir:// reader against seek tables that lie and frames that are
damaged: a size a frame header declares beats the table, a table that
disagrees with a header is refused, a size only the table gives is checked
when its frame is decoded, and no byte a frame's checks have not passed is
returned. Lines of a binary file come from a buffer, not a fetch per line."""

from __future__ import annotations

import random
import struct
import subprocess
from pathlib import Path

import fsspec
import pytest
from conftest import run_weir, same_bytes, text_lines

import weir.filesystem
from weir import FormatError, WeirFileSystem

KiB = 1 << 10


def numbers() -> bytes:
    """``seq 1 400000``: 2,688,895 bytes."""
    return b"".join(b"%d\n" % n for n in range(1, 400_001))


def with_table_changed(path: Path, changes: dict[int, int]) -> None:
    """Adds ``changes[entry]`` to those entries' content sizes in the seek
    table at the end of ``path``."""
    data = bytearray(path.read_bytes())
    count, descriptor, _ = struct.unpack("<IBI", data[-9:])
    entry_size = 12 if descriptor & 0x80 else 8
    first = len(data) - 9 - count * entry_size
    for entry, change in changes.items():
        at = first + entry * entry_size + 4
        struct.pack_into("<I", data, at, struct.unpack_from("<I", data, at)[0] + change)
    path.write_bytes(bytes(data))


def read_at(path: Path, start: int, length: int) -> bytes:
    with fsspec.open(f"weir::{path}", "rb") as handle:
        handle.seek(start)
        return handle.read(length)


def test_a_table_that_a_frame_header_contradicts_is_refused(weir_bin: Path, tmp_path: Path) -> None:
    # weir's frames declare their sizes: entry 0 raised by 1,000 and entry 1
    # lowered by as much (the total kept) contradict frames 0 and 1.
    path = tmp_path / "lying.zst"
    path.write_bytes(run_weir(weir_bin, "-c", "-B256K", stdin=numbers()))
    with_table_changed(path, {0: 1000, 1: -1000})
    refused = (
        r"lying\.zst: the seek table does not match the frames: entry 0 lists 263144 bytes of content, "
        r"but frame 0 at offset 0 declares 262144"
    )
    with pytest.raises(FormatError, match=refused):
        WeirFileSystem().info(str(path))
    with pytest.raises(FormatError, match=refused):
        read_at(path, 300_000, 20)


def test_sizes_only_the_table_gives_are_checked_when_their_frame_is_decoded(tmp_path: Path) -> None:
    # pyzstd's frames declare no size: the table's sizes are taken, and the
    # frames a read decodes are checked against them.
    pyzstd = pytest.importorskip("pyzstd")
    content = numbers()
    path = tmp_path / "pyzstd.zst"
    with pyzstd.SeekableZstdFile(str(path), "wb", max_frame_content_size=64 * KiB) as output:
        output.write(content)
    with_table_changed(path, {3: 1000, 4: -1000})
    index = WeirFileSystem().index(str(path))
    assert index.size == len(content)
    frame = index.frames[3]
    # Frames before the lie read right; the lying entry's frame fails, named.
    assert read_at(path, 0, 3 * 64 * KiB) == content[: 3 * 64 * KiB]
    lie = rf"pyzstd\.zst: frame 3 at offset {frame.offset} decodes to 65536 bytes of content, but its seek table "
    with pytest.raises(FormatError, match=lie + "entry lists 66536"):
        read_at(path, 3 * 64 * KiB + 100, 10)
    # A read across the boundary the table gives: frame 3 must end exactly
    # there, not be joined to frame 4's first bytes.
    with pytest.raises(FormatError, match=lie):
        read_at(path, 4 * 64 * KiB + 500, 1000)
    with pytest.raises(FormatError, match=r"frame 4 at offset \d+ decodes to 65536 bytes of content, but its seek "):
        read_at(path, 4 * 64 * KiB + 2000, 10)


def pyzstd_seekable(path: Path, content: bytes) -> None:
    """pyzstd's seekable file of ``content`` in frames of 64 KiB of content,
    which declare no size: only the table gives it."""
    import pyzstd

    with pyzstd.SeekableZstdFile(str(path), "wb", max_frame_content_size=64 * KiB) as output:
        output.write(content)


@pytest.mark.parametrize("change", [-64 * KiB, -64 * KiB + 100])
def test_an_entry_of_too_little_content_for_its_frame_is_refused(tmp_path: Path, change: int) -> None:
    # Issue 67: entry 3 lists no content (or 100 bytes) for a frame of
    # kilobytes. No zstd frame is that large for so little: without the
    # check, every offset after it was shifted and reads returned the wrong
    # bytes. The frame's header declares no size to contradict it.
    content = numbers()
    path = tmp_path / "pyzstd.zst"
    pyzstd_seekable(path, content)
    frame = WeirFileSystem().index(str(path)).frames[3]
    with_table_changed(path, {3: change})
    refused = (
        rf"pyzstd\.zst: the seek table does not match the frames: entry 3 lists {frame.size} compressed bytes for "
        rf"{64 * KiB + change} bytes of content, more than any zstd frame takes for it \(at most \d+\): "
        rf"frame 3 at offset {frame.offset} is a zstd frame"
    )
    with pytest.raises(FormatError, match=refused):
        read_at(path, 5 * 64 * KiB, 100)
    with pytest.raises(FormatError, match=refused):
        WeirFileSystem().info(str(path))


def test_an_entry_of_more_content_than_its_frame_holds_is_refused(tmp_path: Path) -> None:
    content = numbers()
    path = tmp_path / "pyzstd.zst"
    pyzstd_seekable(path, content)
    with_table_changed(path, {2: 3_000_000_000})
    refused = (
        r"pyzstd\.zst: the seek table does not match the frames: entry 2 lists 3000065536 bytes of content for "
        r"\d+ compressed bytes, more than any zstd frame of that size holds"
    )
    with pytest.raises(FormatError, match=refused):
        read_at(path, 0, 100)


def test_skippable_entries_of_no_content_still_pass(weir_bin: Path, tmp_path: Path) -> None:
    # pzstd's 12-byte size frames, listed by weir --index as entries of no
    # content; and a table listing a skippable frame of 2 KiB: not zstd frames.
    content = numbers()
    path = tmp_path / "p.zst"
    path.write_bytes(
        subprocess.run(["pzstd", "-q", "-p", "2", "-1", "-c"], input=content, capture_output=True, check=True).stdout
    )
    run_weir(weir_bin, "-q", "--index", path)
    assert read_at(path, 2_000_000, 1000) == content[2_000_000:2_001_000]
    skippable = struct.pack("<II", 0x184D2A53, 2040) + bytes(2040)
    body = subprocess.run(["zstd", "-q", "-c"], input=content, capture_output=True, check=True).stdout
    table_body = struct.pack("<II", 2048, 0) + struct.pack("<II", len(body), len(content))
    footer = struct.pack("<IBI", 2, 0, 0x8F92EAB1)
    table = struct.pack("<II", 0x184D2A5E, len(table_body) + len(footer)) + table_body + footer
    mixed = tmp_path / "mixed.zst"
    mixed.write_bytes(skippable + body + table)
    assert read_at(mixed, 1_000_000, 1000) == content[1_000_000:1_001_000]


def test_a_read_that_ends_inside_a_damaged_frame_fails(weir_bin: Path, tmp_path: Path) -> None:
    # 3 MiB of random bytes at -B1M: stored blocks; one byte of frame 0 flipped.
    content = random.Random(5).randbytes(3 << 20)
    data = bytearray(run_weir(weir_bin, "-c", "-B1M", stdin=content))
    data[500_000] ^= 0x01
    path = tmp_path / "flipped.zst"
    path.write_bytes(bytes(data))
    with pytest.raises(FormatError, match=r"flipped\.zst: frame 0 at offset 0 does not decode: .*checksum"):
        read_at(path, 0, 600_000)
    assert read_at(path, 1 << 20, 1000) == content[1 << 20 : (1 << 20) + 1000]


def test_a_binary_file_gives_its_lines_from_a_buffer(
    weir_bin: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    content = text_lines(3 << 20, seed=7)
    path = tmp_path / "lines.zst"
    path.write_bytes(run_weir(weir_bin, "-c", "-B1M", stdin=content))
    fetched: list[int] = []

    class CountedFile(weir.filesystem.WeirFile):
        def _fetch_range(self, start: int, end: int) -> bytes:
            fetched.append(end - start)
            return super()._fetch_range(start, end)

    monkeypatch.setattr(weir.filesystem, "WeirFile", CountedFile)
    with fsspec.open(f"weir::{path}", "rb") as handle:
        lines = list(handle)
    assert same_bytes(b"".join(lines), content)
    assert lines == content.splitlines(keepends=True)
    # Each byte of content is fetched about once, not a block per line.
    assert sum(fetched) <= len(content) + (1 << 20)
    # readline, seek and iteration mixed keep the position right.
    with fsspec.open(f"weir::{path}", "rb") as handle:
        first = handle.readline()
        handle.seek(1000)
        after = next(handle)
        rest = handle.read(10)
        assert (first, after) == (lines[0], content[1000 : content.index(b"\n", 1000) + 1])
        assert rest == content[1001 + len(after) - 1 : 1011 + len(after) - 1]
        assert handle.tell() == 1000 + len(after) + 10
