"""The member index's two versions (docs/members.md, "Its content"): weir's
index of real GNU tar archives is version 2 and lists them as GNU tar does,
version 1 is still read, crafted columns that lie are refused, and the
columns encoded by the tests' own writer are weir's byte for byte."""

from __future__ import annotations

import dataclasses
import io
import struct
import subprocess
import sys
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import fsspec
import pytest
from tar_archives import (
    DEEP_PATH,
    DEVICE,
    GAP,
    GNAME,
    LINK,
    MODE,
    PATH_POP,
    PATH_REST,
    TYPE,
    UNAME,
    ZSTD_MAGIC,
    column_blocks,
    columns_content,
    files_under,
    index_frame,
    indexed_archive,
    pack_blocks,
    record_list,
    skippable_index,
    tar_members,
    uvarint,
    with_index,
)

from weir import FormatError
from weir.archive import WeirTarFileSystem
from weir.members import INDEX_TAG, MemberIndex, read_member_index

if sys.version_info >= (3, 14):
    from compression.zstd import decompress
else:
    from backports.zstd import decompress


def index_of(archive: bytes, name: str = "a.tar.zst") -> MemberIndex:
    index = read_member_index(lambda offset, length: archive[offset : offset + length], len(archive), name)
    assert index is not None
    return index


def index_content(archive: bytes) -> bytes:
    """What follows ``WEIRTARI`` in the index frame of weir's ``archive``."""
    index = index_of(archive)
    size = struct.unpack_from("<I", archive, index.offset + 4)[0]
    assert archive[index.offset + 8 : index.offset + 16] == INDEX_TAG
    return archive[index.offset + 16 : index.offset + 8 + size]


def tar_listing(tar: Path) -> list[bytes]:
    """The names GNU tar lists, as bytes."""
    run = subprocess.run(["tar", "--quoting-style=literal", "-tf", str(tar)], capture_output=True, check=True)
    return run.stdout.splitlines()


def assert_lists_the_tar(index: MemberIndex, tar: Path) -> None:
    """``index`` lists every member of ``tar`` as GNU tar names it and with
    what tarfile reads of it: offsets, sizes, times, owners, types, links,
    device numbers."""
    data = tar.read_bytes()
    expected, end_offset = tar_members(data)
    assert [member.path for member in index.members] == tar_listing(tar)
    assert (index.end_offset, index.content_size, index.ended_early) == (end_offset, len(data), False)
    for member, want in zip(index.members, expected, strict=True):
        got = {key: getattr(member, key) for key in want}
        if member.path.endswith(b"sparse.bin") and data[member.header_offset + 156] == ord("x"):
            # A pax sparse 1.0 member: its map, which tarfile counts as
            # headers, is data as it stands in the archive to weir.
            assert member.end == want["header_offset"] + want["header_length"] + want["data_length"]
            got["header_length"], got["data_length"] = want["header_length"], want["data_length"]
        assert got == want, member.path


def test_weirs_index_is_version_2_and_lists_the_tar_as_gnu_tar_does(archive: dict) -> None:
    data = archive["zst"].read_bytes()
    assert index_content(data)[0] == 2  # version 2's header, not a zstd frame (0x28)
    index = index_of(data)
    assert_lists_the_tar(index, archive["tar"])
    kinds = {member.type for member in index.members}
    assert {b"0", b"1", b"2", b"5"} <= kinds
    if archive["format"] != "ustar":
        assert f"tree/{DEEP_PATH}".encode() in [member.path for member in index.members]


def test_a_version_1_index_is_still_read(archive: dict, tmp_path: Path) -> None:
    tar = archive["tar"].read_bytes()
    v1 = tmp_path / "v1.tar.zst"
    v1.write_bytes(with_index(archive["zst"].read_bytes(), index_frame(record_list(tar))))
    assert index_content(v1.read_bytes())[0] == 0x28  # a zstd frame right after the tag
    index = index_of(v1.read_bytes())
    assert_lists_the_tar(index, archive["tar"])
    fs = fsspec.filesystem("weir-tar", fo=str(v1))
    for name, path in files_under(archive["tree"]).items():
        with fs.open(name) as member:
            assert member.read() == path.read_bytes(), name


def crafted_tar(count: int, big: int = 0) -> bytes:
    """A GNU tar made by tarfile: ``count`` files of names over 200 bytes
    in folders that come and go, owners that change, a character and a block
    device, a FIFO, links, a file before 1970, and one of ``big`` bytes."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.GNU_FORMAT) as tar:

        def add(name: str, kind: bytes = tarfile.REGTYPE, data: bytes = b"", **fields: Any) -> None:
            info = tarfile.TarInfo(name)
            info.type, info.size, info.mtime, info.mode = kind, len(data), 1_700_000_000, 0o644
            for key, value in fields.items():
                setattr(info, key, value)
            tar.addfile(info, io.BytesIO(data) if data else None)

        add("top/", tarfile.DIRTYPE, mode=0o755)
        add("top/dev/tty0", tarfile.CHRTYPE, devmajor=4, devminor=0, uname="root", gname="tty")
        add("top/dev/sda1", tarfile.BLKTYPE, devmajor=8, devminor=1, uname="root", gname="disk")
        add("top/dev/big", tarfile.CHRTYPE, devmajor=4095, devminor=1 << 19, mode=0o600)
        add("top/fifo", tarfile.FIFOTYPE)
        add("top/old.txt", data=b"before 1970\n", mtime=-86_400 * 400)
        for n in range(count):
            folder = f"top/{'d' * 90}/{n // 700:03d}/{'e' * 60}/{n // 7 % 3}"
            add(
                f"{folder}/{'n' * 50}{n}.txt",
                data=b"x" * (n % 1500),
                uname=f"user{n % 3}",
                gname="staff",
                uid=1000 + n % 3,
                gid=50,
                mtime=1_700_000_000 + n * 37 % 1000,
            )
        add("top/link", tarfile.SYMTYPE, linkname="old.txt")
        add("top/hard", tarfile.LNKTYPE, linkname="top/old.txt")
        if big:
            add("top/big.bin", data=bytes(big))
    return out.getvalue()


def block_counts(content: bytes) -> list[int]:
    """The member count of each block of a version 2 index (its content after the tag)."""
    at = 0
    for _ in range(5):  # version, flags, count, end offset, content size
        while content[at] & 0x80:
            at += 1
        at += 1
    raw, counts, at = decompress(content[at:]), [], 0

    def varint() -> int:
        nonlocal at
        value = shift = 0
        while True:
            byte = raw[at]
            at += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                return value

    while at < len(raw):
        counts.append(varint())
        columns = sum(varint() for _ in range(18))
        at += columns
    return counts


def test_weirs_index_of_many_blocks_devices_and_a_big_member(tmp_path: Path, weir_bin: Path) -> None:
    tar = tmp_path / "many.tar"
    tar.write_bytes(crafted_tar(5000, big=17 << 20))
    zst = indexed_archive(weir_bin, tar, tmp_path / "many.tar.zst")
    data = zst.read_bytes()
    counts = block_counts(index_content(data))
    assert len(counts) >= 2 and sum(counts) == 5009, counts  # blocks of 1 MiB of raw columns at most
    index = index_of(data)
    assert_lists_the_tar(index, tar)
    devices = {m.path: (m.devmajor, m.devminor) for m in index.members if m.type in (b"3", b"4")}
    assert devices == {b"top/dev/tty0": (4, 0), b"top/dev/sda1": (8, 1), b"top/dev/big": (4095, 1 << 19)}
    assert index.members[-1].size == 17 << 20 and index.members[5].mtime == -86_400 * 400
    # The columns encoded here, in blocks of 7 and with a content size, read the same.
    ours = with_index(
        data,
        skippable_index(
            columns_content(
                pack_blocks(column_blocks(tar_members(tar.read_bytes())[0], 7)),
                5009,
                index.end_offset,
                index.content_size,
                with_size=True,
            )
        ),
    )
    assert index_of(ours).members == index.members
    # weir-tar gives a device's numbers as fsspec's tar:// of the plain tar does.
    info = WeirTarFileSystem(fo=str(zst)).info("top/dev/big")
    theirs = fsspec.filesystem("tar", fo=str(tar)).info("top/dev/big")
    assert (info["devmajor"], info["devminor"]) == (theirs["devmajor"], theirs["devminor"]) == (4095, 1 << 19)


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory, weir_bin: Path) -> dict:
    """A small crafted tar, weir's archive of it, and its members as tarfile reads them."""
    root = tmp_path_factory.mktemp("small")
    tar = root / "a.tar"
    tar.write_bytes(crafted_tar(30))
    zst = indexed_archive(weir_bin, tar, root / "a.tar.zst", "-B4K")
    members, end_offset = tar_members(tar.read_bytes())
    return {"tar": tar, "zst": zst.read_bytes(), "members": members, "end": end_offset, "root": root}


Blocks = list[tuple[int, list[bytearray]]]


def lying_columns(small: dict, edit: Callable[[Blocks], None] | None = None, **options: Any) -> Path:
    """weir's archive of the small tar with an index of version 2 encoded
    here, in blocks of 10 members, ``edit`` changing its columns first;
    ``options`` go to columns_content (count, end_offset, version…)."""
    blocks = column_blocks(small["members"], 10)
    if edit is not None:
        edit(blocks)
    count = options.pop("count", len(small["members"]))
    end = options.pop("end_offset", small["end"])
    raw = options.pop("raw", pack_blocks(blocks))
    then = options.pop("then", None)
    content = columns_content(raw, count, end, small["tar"].stat().st_size, **options)
    if then is not None:
        content = then(content)
    path = small["root"] / "lie.tar.zst"
    path.write_bytes(with_index(small["zst"], skippable_index(content)))
    return path


def test_the_honest_columns_read_as_weirs_own(small: dict) -> None:
    # The control for the lies below: the same encoding, unchanged, is believed.
    assert index_of(lying_columns(small).read_bytes()).members == index_of(small["zst"]).members


def pop_past(blocks: Blocks) -> None:
    # Member 2 (top/dev/sda1, after top/dev/tty0: two folders) leaves three.
    blocks[0][1][PATH_POP][2] = 3


def cut(column: int, count: int = 1) -> Callable[[Blocks], None]:
    def edit(blocks: Blocks) -> None:
        del blocks[0][1][column][-count:]

    return edit


def extra(column: int, value: bytes) -> Callable[[Blocks], None]:
    def edit(blocks: Blocks) -> None:
        blocks[1][1][column] += value

    return edit


def mark(column: int, value: int) -> Callable[[Blocks], None]:
    def edit(blocks: Blocks) -> None:
        blocks[0][1][column][0] = value

    return edit


def mode(blocks: Blocks) -> None:
    assert blocks[0][1][MODE][0:2] == uvarint(0o755)  # top/'s
    blocks[0][1][MODE][0:2] = uvarint(0o17777)


LIES: dict[str, tuple[Callable[[Blocks], None] | None, dict[str, Any], str]] = {
    "a gap column one value short": (cut(GAP), {}, r"block 0: the gap column ends before its members do"),
    "a type column one byte short": (cut(TYPE), {}, r"block 0: the type column ends before its members do"),
    "a path column without its last NUL": (cut(PATH_REST), {}, r"block 0: the path rest column ends before"),
    "a device column one value short": (cut(DEVICE), {}, r"block 0: the device column ends before its members do"),
    "a byte left over in the mode column": (extra(MODE, b"\0"), {}, r"block 1: the mode column holds 1 bytes past"),
    "a name left over in the link column": (extra(LINK, b"x\0"), {}, r"block 1: the link column holds 2 bytes past"),
    "an unknown uname mark": (mark(UNAME, 2), {}, r"block 0: the uname column holds the mark 2, neither 0"),
    "an unknown gname mark": (mark(GNAME, 0x80), {}, r"block 0: the gname column holds the mark 128"),
    "a pop past the previous path's folders": (pop_past, {}, r"member 2's path leaves 3 folders of .*, which has 2"),
    "a mode past 7777": (mode, {}, r"member 0 \(top/\) has the mode 17777, past 7777"),
    "one member more declared": (None, {"count": 39}, r"it declares 39 members, but its columns hold 38"),
    "one member fewer declared": (None, {"count": 37}, r"its blocks hold more members than the 37 it declares"),
    "an end offset before the last member's end": (None, {"end_offset": 1024}, r"member \d+ .* past the end offset"),
    "an end offset past the content": (None, {"end_offset": 1 << 40}, r"the end offset \d+ passes the content size"),
    "version 3": (None, {"version": 3}, r"version 3, which this reader does not know \(it reads 1 and 2\)"),
    "version 1's number before columns": (None, {"version": 1}, r"version 1, which this reader does not know"),
    "a block of no members": (None, {"raw": uvarint(0) + bytes(18)}, r"block 0 declares 0 members"),
    "a column past the stream": (None, {"raw": uvarint(1) + uvarint(99) + bytes(17)}, r"block 0.s gap column runs"),
    "no checksum": (None, {"checksum": False}, r"its zstd frame lacks its checksum"),
    "bytes after the frame": (None, {"then": lambda c: c + b"\0\0"}, r"2 bytes follow its zstd frame"),
    "a frame cut short": (None, {"then": lambda c: c[:-6]}, r"its zstd frame is cut short|does not decode"),
    "not a zstd frame": (None, {"then": lambda c: c.replace(ZSTD_MAGIC, b"\x28\xb5\x2f\xfe")}, r"not a zstd frame"),
    "a header cut short": (None, {"then": lambda c: b"\x02\x00\x80"}, r"its header runs past the end"),
}


@pytest.mark.parametrize("lie", LIES)
def test_a_version_2_index_that_lies_is_refused(small: dict, lie: str) -> None:
    edit, options, message = LIES[lie]
    path = lying_columns(small, edit, **options)
    at = index_of(small["zst"]).offset
    with pytest.raises(FormatError, match=rf"lie\.tar\.zst: the member index at offset {at} is damaged: {message}"):
        fsspec.filesystem("weir-tar", fo=str(path))


def test_the_columns_encoded_here_are_weirs_byte_for_byte(archive: dict) -> None:
    # The encoder the lies above come from, given what the reader read of
    # weir's index, writes weir's columns again (one block, as weir's).
    data = archive["zst"].read_bytes()
    index, weirs = index_of(data), index_content(data)
    members = [dataclasses.asdict(member) for member in index.members]
    ours = columns_content(
        pack_blocks(column_blocks(members, 1000)), len(members), index.end_offset, index.content_size
    )
    assert ours[: ours.index(ZSTD_MAGIC)] == weirs[: weirs.index(ZSTD_MAGIC)]
    assert decompress(ours[ours.index(ZSTD_MAGIC) :]) == decompress(weirs[weirs.index(ZSTD_MAGIC) :])
