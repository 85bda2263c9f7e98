"""The weir-tar:// protocol: members of real GNU tar archives (ustar, pax,
gnu) compressed by weir, read from the member index; and fsspec's own
tar:// chained over weir::."""

from __future__ import annotations

import struct
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import fsspec
import pandas
import pytest
from fsspec.implementations.local import LocalFileOpener, LocalFileSystem
from tar_archives import (
    DEEP_PATH,
    LONG_FOLDER,
    csv_bytes,
    files_under,
    gnu_tar,
    indexed_archive,
    make_tree,
    record_list,
)

from weir import FormatError, WeirFileSystem
from weir.archive import WeirTarFileSystem
from weir.members import parse_member_index

if sys.version_info >= (3, 14):
    pass
else:
    pass


def test_every_member_reads_as_the_file_it_came_from(archive: dict) -> None:
    fs = fsspec.filesystem("weir-tar", fo=str(archive["zst"]))
    files = files_under(archive["tree"])
    if archive["format"] != "ustar":
        assert f"tree/{LONG_FOLDER}/long.txt" in files and f"tree/{DEEP_PATH}" in files
    for name, path in files.items():
        with fs.open(name) as member:
            assert member.read() == path.read_bytes(), name
        assert fs.info(name)["size"] == path.stat().st_size, name


def test_listing_matches_fsspecs_tar_of_the_plain_archive(archive: dict) -> None:
    ours = fsspec.filesystem("weir-tar", fo=str(archive["zst"]))
    theirs = fsspec.filesystem("tar", fo=str(archive["tar"]))
    for fs in (ours, theirs):
        fs.invalidate_cache()

    def listing(fs: fsspec.AbstractFileSystem) -> list[tuple[str, str, int]]:
        return [(i["name"], i["type"], i["size"]) for i in fs.find("", withdirs=True, detail=True).values()]

    assert listing(ours) == listing(theirs)
    assert ours.ls("tree/dir", detail=False) == theirs.ls("tree/dir", detail=False) == ["tree/dir/sub"]
    assert ours.glob("tree/**/*.txt") == theirs.glob("tree/**/*.txt")
    assert ours.info("tree/data")["type"] == "directory"
    assert ours.info("tree/link.csv")["linkname"] == "data/x.csv"


def test_a_url_chain_opens_a_member_and_pandas_reads_it(archive: dict) -> None:
    url = f"weir-tar://tree/data/x.csv::file://{archive['zst']}"
    with fsspec.open(url, "rt") as member:
        assert member.readline() == "id,name,score\n"
    frame = pandas.read_csv(url)
    assert frame.equals(pandas.read_csv(archive["tree"] / "data" / "x.csv"))


def test_a_name_not_in_the_archive_is_not_found(archive: dict) -> None:
    fs = fsspec.filesystem("weir-tar", fo=str(archive["zst"]))
    with pytest.raises(FileNotFoundError, match=r"tree/data/y\.csv"):
        fs.open("tree/data/y.csv")
    with pytest.raises(IsADirectoryError):
        fs.open("tree/data")
    assert not fs.exists("tree/nowhere")


def lying_archive(tmp_path: Path, weir_bin: Path, edit: Callable[[list[dict]], None]) -> WeirTarFileSystem:
    tar = gnu_tar(make_tree(tmp_path, csv_bytes(2000)), tmp_path / "a.tar", "gnu")
    zst = indexed_archive(weir_bin, tar, tmp_path / "a.tar.zst", "-B4K", records=record_list(tar.read_bytes(), edit))
    return WeirTarFileSystem(fo=str(zst))


def member_named(members: list[dict], name: bytes) -> dict:
    return next(member for member in members if member["path"] == name)


def test_an_index_that_names_another_member_is_refused(tmp_path: Path, weir_bin: Path) -> None:
    def swap(members: list[dict]) -> None:
        note, empty = member_named(members, b"tree/dir/sub/note.txt"), member_named(members, b"tree/data/empty.txt")
        note["path"], empty["path"] = empty["path"], note["path"]

    fs = lying_archive(tmp_path, weir_bin, swap)
    at = fs.info("tree/dir/sub/note.txt")["offset"]
    expected = (
        rf"a\.tar\.zst: member index disagrees with the archive: 'tree/dir/sub/note\.txt', listed at offset {at} "
        r"of the content, but the header there names b'tree/data/empty\.txt'"
    )
    with pytest.raises(FormatError, match=expected):
        fs.open("tree/dir/sub/note.txt")


def test_an_index_whose_offset_points_into_data_is_refused(tmp_path: Path, weir_bin: Path) -> None:
    def shift(members: list[dict]) -> None:
        note = member_named(members, b"tree/dir/sub/note.txt")
        note["header_offset"] += 512  # into its own data (700 bytes); its end unchanged
        note["data_length"] -= 512

    fs = lying_archive(tmp_path, weir_bin, shift)
    with pytest.raises(FormatError, match=r"member index disagrees with the archive: .* has no tar header there"):
        fs.open("tree/dir/sub/note.txt")


def test_an_index_with_a_wrong_header_length_is_refused(tmp_path: Path, weir_bin: Path) -> None:
    def lengthen(members: list[dict]) -> None:
        note = member_named(members, b"tree/dir/sub/note.txt")
        note["header_length"] += 512  # its data would start a block late
        note["data_length"] -= 512

    fs = lying_archive(tmp_path, weir_bin, lengthen)
    with pytest.raises(FormatError, match=r"member index disagrees with the archive: .* but its data starts at"):
        fs.open("tree/dir/sub/note.txt")


def test_a_damaged_index_fails_with_the_file_and_its_offset(tmp_path: Path, weir_bin: Path) -> None:
    tree = make_tree(tmp_path, csv_bytes(100))
    tar = gnu_tar(tree, tmp_path / "a.tar", "gnu")
    zst = indexed_archive(weir_bin, tar, tmp_path / "a.tar.zst", "-B4K")
    data = bytearray(zst.read_bytes())
    at = data.rindex(b"WEIRTARI")
    data[at + 40] ^= 0x55  # inside the index's zstd frame
    zst.write_bytes(bytes(data))
    with pytest.raises(FormatError, match=rf"a\.tar\.zst: the member index at offset {at - 8} is damaged"):
        fsspec.filesystem("weir-tar", fo=str(zst))


@pytest.mark.parametrize("writer", ["zstd", "weir --no-member-index"])
def test_an_archive_without_an_index_says_how_to_add_one(tmp_path: Path, weir_bin: Path, writer: str) -> None:
    tar = gnu_tar(make_tree(tmp_path, csv_bytes(10)), tmp_path / "a.tar", "gnu")
    zst = tmp_path / "a.tar.zst"
    command = ["zstd", "-q", "-c"] if writer == "zstd" else [str(weir_bin), "-q", "-c", "-B4K", "--no-member-index"]
    zst.write_bytes(subprocess.run([*command, str(tar)], capture_output=True, check=True).stdout)
    with pytest.raises(FormatError, match=r"a\.tar\.zst: no member index .*weir --index a\.tar\.zst"):
        fsspec.filesystem("weir-tar", fo=str(zst))


@pytest.mark.parametrize("damage", ["table magic", "entry size", "reserved bit"])
def test_a_corrupt_seek_table_is_named_not_taken_for_a_missing_index(
    tmp_path: Path, weir_bin: Path, damage: str
) -> None:
    # Issue 67: weir-tar said "no member index ... add one with weir --index".
    tar = gnu_tar(make_tree(tmp_path, csv_bytes(100)), tmp_path / "a.tar", "gnu")
    zst = indexed_archive(weir_bin, tar, tmp_path / "a.tar.zst", "-B4K")
    data = bytearray(zst.read_bytes())
    count, descriptor, _ = struct.unpack("<IBI", data[-9:])
    table_at = len(data) - 9 - count * (12 if descriptor & 0x80 else 8) - 8
    if damage == "table magic":
        data[table_at] ^= 0x01
    elif damage == "entry size":
        struct.pack_into("<I", data, table_at + 8, 0xFFFF0000)
    else:
        data[-5] |= 0x04
    zst.write_bytes(bytes(data))
    with pytest.raises(FormatError, match=r"a\.tar\.zst: corrupt seek table") as raised:
        fsspec.filesystem("weir-tar", fo=str(zst))
    assert "no member index" not in str(raised.value)


class CountingFileSystem(LocalFileSystem):
    """The local file system, counting the bytes its files' reads return."""

    protocol = "counting"
    bytes_read = 0

    def _open(self, path: str, mode: str = "rb", block_size: Any = None, **kwargs: Any) -> LocalFileOpener:
        return CountingOpener(self._strip_protocol(path), mode, fs=self, **kwargs)


class CountingOpener(LocalFileOpener):
    def read(self, *args: Any, **kwargs: Any) -> bytes:
        data = super().read(*args, **kwargs)
        CountingFileSystem.bytes_read += len(data)
        return data

    def readinto(self, buffer: Any) -> int:
        count = self.f.readinto(buffer)
        CountingFileSystem.bytes_read += count
        return count


def test_one_member_of_a_big_archive_reads_its_frames_not_the_archive(
    tmp_path: Path, weir_bin: Path, text_file: Path
) -> None:
    fsspec.register_implementation("counting", CountingFileSystem, clobber=True)
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "a.log").symlink_to(text_file)
    (tree / "m.csv").write_bytes(csv_bytes(30_000))
    (tree / "z.log").symlink_to(text_file)
    tar = tmp_path / "a.tar"
    subprocess.run(
        ["tar", "-ch", "--hard-dereference", "-f", str(tar), "-C", str(tmp_path), "tree"], check=True
    )  # -h: the logs' content
    zst = indexed_archive(weir_bin, tar, tmp_path / "a.tar.zst", "-B1MiB")
    size = zst.stat().st_size
    assert tar.stat().st_size > 40_000_000

    CountingFileSystem.bytes_read = 0
    frame = pandas.read_csv(f"weir-tar://tree/m.csv::counting://{zst}")
    read = CountingFileSystem.bytes_read
    assert frame.equals(pandas.read_csv(tree / "m.csv"))
    member = WeirTarFileSystem(fo=str(zst)).info("tree/m.csv")
    frames = WeirFileSystem().index(str(zst)).covering(member["offset"], member["offset_data"] + member["size"])
    index_and_table = size - WeirTarFileSystem(fo=str(zst)).members.offset
    print(f"one member: {read} bytes read of the archive's {size}")
    # Its frames, the index and the seek table, and the table's checks (22 bytes a frame).
    assert read <= sum(f.size for f in frames) + index_and_table + 64 * 1024
    assert read < size / 20

    # Opened again (fsspec makes a new file system per URL): the index and
    # the frame table are not read again, only the member's frames.
    CountingFileSystem.bytes_read = 0
    with fsspec.open(f"weir-tar://tree/m.csv::counting://{zst}", "rb") as again:
        assert again.read() == (tree / "m.csv").read_bytes()
    assert CountingFileSystem.bytes_read <= sum(f.size for f in frames)


def test_a_record_list_cut_short_or_of_another_version_is_refused(tmp_path: Path) -> None:
    tar = gnu_tar(make_tree(tmp_path, csv_bytes(10)), tmp_path / "a.tar", "gnu")
    records = record_list(tar.read_bytes())
    assert len(parse_member_index(records).members) > 5
    with pytest.raises(FormatError, match=r"member \d+'s record runs past the end of the index"):
        parse_member_index(records[:-3])
    with pytest.raises(FormatError, match="version 2, which this reader does not know"):
        parse_member_index(b"\x02" + records[1:])
    with pytest.raises(FormatError, match="3 bytes follow the last member's record"):
        parse_member_index(records + b"\x00\x00\x00")
