"""Dask splits weir's files through weir:// on a real cluster: the same lines
and rows as the plain file, whatever the frames and the splits cut."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import run_weir, text_lines

KiB = 1 << 10


def edge_lines() -> bytes:
    """Lines cut by 4 KiB and 64 KiB frames in every way a splitter can trip
    on: a newline as a frame's last byte (offsets 4095 and 65,535), a line
    longer than a 64 KiB frame, CRLF, empty lines, no final newline."""
    head = b"a" * 4095 + b"\n"  # ends exactly at the first 4 KiB frame's end
    filler = text_lines(65_536 - len(head) - 1, seed=5)[: 65_536 - len(head) - 1]
    filler = filler[:-1] + b"x" if filler.endswith(b"\n") else filler
    before_64k = head + filler + b"\n"  # the newline is byte 65,535
    assert len(before_64k) == 65_536
    long_line = b"L" * 200_000 + b"\n"
    crlf = b"".join(b"windows line %d\r\n" % n for n in range(3000))
    empty = b"\n" * 5000
    mixed = text_lines(150_000, seed=9)
    return before_64k + long_line + crlf + empty + mixed + b"\n\n" + mixed[:777].replace(b"\n", b" ") + b"no newline"


def same(got: list[str], expected: list[str]) -> bool:
    """Whether two lists of lines are equal, said without pytest's diff of
    half a megabyte (which takes minutes)."""
    if got == expected:
        return True
    first = next((n for n, pair in enumerate(zip(got, expected, strict=False)) if pair[0] != pair[1]), None)
    print(f"{len(got)} lines, {len(expected)} expected, first difference at line {first}")
    return False


def lines_of(client: object, url: str, blocksize: int) -> tuple[int, list[str]]:
    import dask.bag

    bag = dask.bag.read_text(url, blocksize=blocksize)
    return bag.npartitions, bag.compute()


@pytest.mark.parametrize("frame", ["-B4K", "-B64K"])
@pytest.mark.parametrize("blocksize", [40_000, 64 * KiB])
def test_every_line_once(client: object, weir_bin: Path, tmp_path: Path, frame: str, blocksize: int) -> None:
    content = edge_lines()
    plain = tmp_path / "edges.txt"
    plain.write_bytes(content)
    packed = tmp_path / "edges.txt.zst"
    packed.write_bytes(run_weir(weir_bin, "-c", frame, plain))
    partitions, lines = lines_of(client, f"weir::{packed}", blocksize)
    assert partitions == len(content) // blocksize  # dask evens out its blocks
    assert lines_of(client, str(plain), blocksize) == (partitions, lines)
    # Text mode reads CRLF as "\n", as Python's open() does.
    expected = content.decode().replace("\r\n", "\n").splitlines(keepends=True)
    assert same(lines, expected)
    assert len(lines) == content.count(b"\n") + 1


def test_a_concatenation_and_a_stock_one_frame_file(client: object, weir_bin: Path, tmp_path: Path) -> None:
    first, second = text_lines(300_000, seed=21), text_lines(300_000, seed=22)
    concatenated = tmp_path / "cat.zst"
    concatenated.write_bytes(
        run_weir(weir_bin, "-c", "-B16K", stdin=first) + run_weir(weir_bin, "-c", "-B32K", stdin=second)
    )
    partitions, lines = lines_of(client, f"weir::{concatenated}", 50_000)
    assert partitions == 12
    assert same(lines, (first + second).decode().splitlines(keepends=True))
    stock = tmp_path / "stock.zst"
    stock.write_bytes(subprocess.run(["zstd", "-q", "-c"], input=first, capture_output=True, check=True).stdout)
    partitions, lines = lines_of(client, f"weir::{stock}", 50_000)
    assert partitions == 6  # one frame read by every split: right, if not faster
    assert same(lines, first.decode().splitlines(keepends=True))


def test_a_csv_with_its_header_across_splits(client: object, weir_bin: Path, tmp_path: Path) -> None:
    import dask.dataframe
    import pandas

    words = text_lines(400_000, seed=31).split()
    csv = b"number,word,length\n" + b"".join(b"%d,%s,%d\n" % (n, w, len(w)) for n, w in enumerate(words))
    plain = tmp_path / "table.csv"
    plain.write_bytes(csv)
    packed = tmp_path / "table.csv.zst"
    packed.write_bytes(run_weir(weir_bin, "-c", "-B4K", plain))
    frame = dask.dataframe.read_csv(f"weir::{packed}", blocksize=100_000, compression=None)
    assert frame.npartitions == len(csv) // 100_000
    got = frame.compute().reset_index(drop=True)
    # dask makes its strings pyarrow's; the values are what count.
    pandas.testing.assert_frame_equal(got, pandas.read_csv(plain), check_dtype=False)


def test_a_damaged_frame_fails_its_task_naming_file_and_offset(client: object, weir_bin: Path, tmp_path: Path) -> None:
    import dask.bag

    from weir import WeirFileSystem

    content = text_lines(300_000, seed=41)
    packed = tmp_path / "damaged.zst"
    data = bytearray(run_weir(weir_bin, "-c", "-B16K", stdin=content))
    packed.write_bytes(bytes(data))
    frame = WeirFileSystem().index(str(packed)).frames[10]
    data[frame.offset + frame.size // 2] ^= 0x10
    broken = tmp_path / "broken.zst"
    broken.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=rf"broken\.zst: frame 10 at offset {frame.offset} "):
        dask.bag.read_text(f"weir::{broken}", blocksize=50_000).count().compute()
