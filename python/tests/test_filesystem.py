"""The weir:// protocol in one process: indexes from every kind of zstd file,
reads that fetch only their frames, pandas and DuckDB."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import fsspec
import pytest
from conftest import run_weir, same_bytes, text_lines

import weir.filesystem
from weir import FormatError, WeirFileSystem

KiB = 1 << 10
MiB = 1 << 20


@pytest.fixture(scope="module")
def content() -> bytes:
    return text_lines(600_000, seed=11)


def read_through_weir(path: Path | str, start: int = 0, length: int = -1) -> bytes:
    with fsspec.open(f"weir::{path}", "rb") as handle:
        handle.seek(start)
        return handle.read(length)


def check_reads(path: Path, content: bytes) -> None:
    fs = WeirFileSystem()
    assert fs.info(str(path))["size"] == len(content)
    assert same_bytes(read_through_weir(path), content)
    for start, length in [(0, 1), (4095, 2), (65_535, 70_000), (len(content) - 10, 100), (len(content), 5)]:
        assert read_through_weir(path, start, length) == content[start : start + length], (start, length)


@pytest.mark.parametrize(
    ("flags", "source"),
    [
        (["-B4K"], "seek-table"),
        (["-B64K", "--no-seek-table"], "headers"),
        (["-B4K", "--no-content-size"], "seek-table"),
    ],
)
def test_weir_files(weir_bin: Path, tmp_path: Path, content: bytes, flags: list[str], source: str) -> None:
    path = tmp_path / "c.zst"
    path.write_bytes(run_weir(weir_bin, "-c", *flags, stdin=content))
    check_reads(path, content)
    assert WeirFileSystem().index(str(path)).source == source


def test_a_concatenation_follows_every_parts_table(weir_bin: Path, tmp_path: Path, content: bytes) -> None:
    # A part without a table (stock zstd's single frame) first, then two weir files.
    pieces = [content[:100_000], content[100_000:350_000], content[350_000:]]
    stock = subprocess.run(["zstd", "-q", "-c"], input=pieces[0], capture_output=True, check=True).stdout
    path = tmp_path / "cat.zst"
    path.write_bytes(
        stock + run_weir(weir_bin, "-c", "-B16K", stdin=pieces[1]) + run_weir(weir_bin, "-c", "-B32K", stdin=pieces[2])
    )
    check_reads(path, content)
    index = WeirFileSystem().index(str(path))
    assert index.source == "headers+seek-tables"
    assert len(index.frames) == 1 + 16 + 8  # 250,000 / 16 KiB and 250,000 / 32 KiB, rounded up


@pytest.mark.parametrize("command", [["zstd", "-q", "-c", "-"], ["zstd", "-q", "-c"], ["pzstd", "-q", "-c", "-p2"]])
def test_other_tools_files(tmp_path: Path, content: bytes, command: list[str]) -> None:
    # zstd from a pipe: one frame of no declared size; from a file: one frame
    # of its size; pzstd: skippable frames before frames of no declared size.
    plain = tmp_path / "plain"
    plain.write_bytes(content * 8)
    arguments = command if command[-1] == "-" else [*command, str(plain)]
    with open(plain, "rb") as source:
        compressed = subprocess.run(arguments, stdin=source, capture_output=True, check=True).stdout
    path = tmp_path / "other.zst"
    path.write_bytes(compressed)
    check_reads(path, content * 8)


def test_a_read_fetches_and_decodes_only_its_frames(
    weir_bin: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A 1.1 GB content written by weir straight from a generator (no plain
    # copy on disk): blocks of a repeated pattern, each numbered.
    block = 64 * KiB
    pattern = text_lines(2 * block, seed=3)

    def block_at(number: int) -> bytes:
        shift = number * 7919 % block
        return f"{number:015d}\n".encode() + pattern[shift : shift + block - 16]

    blocks = 17_000  # 1,114,112,000 bytes
    path = tmp_path / "big.zst"
    with open(path, "wb") as output:
        process = subprocess.Popen(
            [str(weir_bin), "-c", "-1", f"--stream-size={blocks * block}"], stdin=subprocess.PIPE, stdout=output
        )
        assert process.stdin is not None
        for start in range(0, blocks, 256):
            process.stdin.write(b"".join(block_at(n) for n in range(start, min(blocks, start + 256))))
        process.stdin.close()
        assert process.wait(timeout=600) == 0
    decoded: list[int] = []

    class CountedDecoding(weir.filesystem.FrameDecoding):
        def read(self, start: int, end: int) -> bytes:
            content = super().read(start, end)
            decoded.append(self.decoded)
            return content

    monkeypatch.setattr(weir.filesystem, "FrameDecoding", CountedDecoding)
    start = 1_000_000_000
    expected = b"".join(block_at(n) for n in range(start // block, (start + MiB) // block + 1))
    skip = start % block
    assert same_bytes(read_through_weir(path, start, MiB), expected[skip : skip + MiB])
    # 1 GB + 1 MiB lies in one 8 MiB frame (the 120th), decoded to its end and checked.
    assert decoded == [8 * MiB]


def test_a_damaged_frame_names_the_file_and_its_offset(weir_bin: Path, tmp_path: Path, content: bytes) -> None:
    # One bit of the third frame flipped: the frames before it still read.
    data = bytearray(run_weir(weir_bin, "-c", "-B64K", stdin=content))
    healthy = tmp_path / "healthy.zst"
    healthy.write_bytes(bytes(data))
    third = WeirFileSystem().index(str(healthy)).frames[2]
    data[third.offset + third.size // 2] ^= 0x10
    damaged = tmp_path / "damaged2.zst"
    damaged.write_bytes(bytes(data))
    assert read_through_weir(damaged, 0, 2 * 65_536) == content[: 2 * 65_536]
    # The whole frame: its damage, or else its checksum, fails the read.
    with pytest.raises(FormatError, match=f"damaged2.zst: frame 2 at offset {third.offset} does not decode"):
        read_through_weir(damaged, 2 * 65_536, 65_536)


def test_not_zstd_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "plain.zst"
    path.write_bytes(b"plain text, not zstd\n" * 10)
    with pytest.raises(FormatError, match=r"plain\.zst"):
        WeirFileSystem().info(str(path))


def test_any_fsspec_file_system_and_pandas(weir_bin: Path, content: bytes) -> None:
    pandas = pytest.importorskip("pandas")
    csv = b"number,word\n" + b"".join(f"{n},{w.decode()}\n".encode() for n, w in enumerate(content.split()[:20_000]))
    memory = fsspec.filesystem("memory")
    memory.pipe("/weir-test/table.csv.zst", run_weir(weir_bin, "-c", "-B16K", stdin=csv))
    try:
        frame = pandas.read_csv("weir::memory://weir-test/table.csv.zst", compression=None)
        assert len(frame) == 20_000
        assert list(frame["word"][:3]) == [w.decode() for w in content.split()[:3]]
        assert frame["number"].sum() == sum(range(20_000))
    finally:
        memory.rm("/weir-test", recursive=True)


def test_duckdb_reads_through_the_registered_file_system(weir_bin: Path, tmp_path: Path, content: bytes) -> None:
    duckdb = pytest.importorskip("duckdb")
    words = content.split()[:50_000]
    csv = b"number,word\n" + b"".join(b"%d,%s\n" % (n, w) for n, w in enumerate(words))
    path = tmp_path / "table.csv.zst"
    path.write_bytes(run_weir(weir_bin, "-c", "-B64K", stdin=csv))
    connection = duckdb.connect()
    connection.register_filesystem(fsspec.filesystem("weir"))
    count, total, longest = connection.execute(
        f"select count(*), sum(number), max(length(word)) from read_csv('weir://{path}', compression='none')"
    ).fetchone()
    assert (count, total, longest) == (len(words), sum(range(len(words))), max(map(len, words)))


def test_only_reading(tmp_path: Path) -> None:
    with pytest.raises(NotImplementedError, match="reading only"):
        WeirFileSystem().open(str(tmp_path / "new.zst"), "wb")
    assert os.listdir(tmp_path) == []


def test_names_are_the_contents_and_globs_find_them(weir_bin: Path, tmp_path: Path) -> None:
    for number in (1, 2):
        (tmp_path / f"f{number}.log.zst").write_bytes(run_weir(weir_bin, "-c", stdin=b"line %d\n" % number))
    (tmp_path / "notes.txt").write_text("not zstd, not listed\n")
    fs = WeirFileSystem()
    assert sorted(fs.ls(str(tmp_path), detail=False)) == [str(tmp_path / "f1.log"), str(tmp_path / "f2.log")]
    assert fs.glob(f"{tmp_path}/*.log.zst") == [str(tmp_path / "f1.log"), str(tmp_path / "f2.log")]
    details = fs.info(f"{tmp_path}/f2.log")
    assert (details["size"], details["compressed_name"]) == (7, str(tmp_path / "f2.log.zst"))
    assert read_through_weir(tmp_path / "f2.log.zst") == read_through_weir(tmp_path / "f2.log") == b"line 2\n"


def test_a_zst_zst_name_loses_one_suffix_only(weir_bin: Path, tmp_path: Path) -> None:
    # x.zst.zst's content is x.zst, not x: beside an x.zst, each opens its own
    # (weir::x.zst names x.zst's file, as weir::big.log.zst does).
    (tmp_path / "x.zst").write_bytes(run_weir(weir_bin, "-c", stdin=b"outer x\n"))
    (tmp_path / "x.zst.zst").write_bytes(run_weir(weir_bin, "-c", stdin=b"inner x.zst\n"))
    assert read_through_weir(tmp_path / "x.zst.zst") == b"inner x.zst\n"
    assert read_through_weir(tmp_path / "x") == b"outer x\n"
    fs = WeirFileSystem()
    assert fs.info(f"{tmp_path}/x.zst.zst")["compressed_name"] == str(tmp_path / "x.zst.zst")
    assert sorted(fs.ls(str(tmp_path), detail=False)) == [str(tmp_path / "x"), str(tmp_path / "x.zst")]


def test_another_writers_seek_table(tmp_path: Path, content: bytes) -> None:
    # pyzstd's SeekableZstdFile writes the seekable format without checksums.
    pyzstd = pytest.importorskip("pyzstd")
    path = tmp_path / "pyzstd.zst"
    with pyzstd.SeekableZstdFile(str(path), "wb", max_frame_content_size=50_000) as output:
        output.write(content)
    check_reads(path, content)
    index = WeirFileSystem().index(str(path))
    assert (index.source, len(index.frames)) == ("seek-table", -(-len(content) // 50_000))
    assert all(frame.checksum is None for frame in index.frames)


def test_fsspecs_tar_over_weir_reads_the_content_once(weir_bin: Path, tmp_path: Path, content: bytes) -> None:
    # tar:// guessed zstd from the name a.tar.zst that weir:: handed on, and
    # decoded weir's decoded content a second time ("Unknown frame descriptor").
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "lines.txt").write_bytes(content)
    tar = subprocess.run(["tar", "-C", str(tmp_path), "-c", "d"], capture_output=True, check=True).stdout
    (tmp_path / "a.tar.zst").write_bytes(run_weir(weir_bin, "-c", "-B64K", stdin=tar))
    with fsspec.open(f"tar://d/lines.txt::weir::{tmp_path / 'a.tar.zst'}", "rb") as member:
        assert same_bytes(member.read(), content)
    assert fsspec.filesystem("tar", fo=f"weir::{tmp_path / 'a.tar.zst'}").ls("d", detail=False) == ["d/lines.txt"]
