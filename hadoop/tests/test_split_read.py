"""Reading one weir file in many partitions on a real Spark cluster gives the rows of the plain
file, each line once (issue 51, part 2)."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from conftest import compress, line_truth, seek_table, text_bytes
from helpers import filled_partitions, read_text, stats
from pyspark.sql import functions as F


def set_split(spark, size: str) -> None:
    spark.conf.set("spark.sql.files.maxPartitionBytes", size)
    spark.conf.set("spark.sql.files.openCostInBytes", "0")


def test_300_mb_slice_reads_in_many_partitions_as_the_plain_file(spark, weir_bin, tmp_path):
    data = text_bytes(300_000_000, seed=51)
    plain = tmp_path / "slice.txt"
    plain.write_bytes(data)
    packed = compress(weir_bin, plain, tmp_path / "slice.txt.zst")
    assert len(seek_table(packed)) >= 30  # 8 MiB frames
    lines, content = line_truth(data)
    del data
    set_split(spark, "16m")
    expected = stats(read_text(spark, plain))
    df = read_text(spark, packed)
    assert df.rdd.getNumPartitions() >= 4
    assert filled_partitions(df) >= 4
    got = stats(df)
    assert got == expected
    assert (got[0], got[2]) == (lines, content)


def edge_content(frame: int, seed: int) -> bytes:
    """Lines that fall on frames every way: cut mid-line, a line longer than three frames, a
    '\\n' as a frame's last byte, '\\r\\n' split across two frames, a lone '\\r' ending a frame,
    CRLF lines, runs of empty lines, and no final newline."""
    body = bytearray(text_bytes(frame * 40, seed=seed, line_breaks=10, carriage_returns=2))
    body[frame * 3: frame * 3] = b"\r\n".join(b"crlf line %d" % i for i in range(50)) + b"\r\n"
    body[frame * 7: frame * 7] = b"\n" * 200  # empty lines
    body[frame * 11 + 5: frame * 11 + 5] = b"L" * (frame * 3 + 123)  # longer than three frames
    long_line = range(frame * 11 + 5, frame * 14 + 128)
    for k in range(1, len(body) // frame):
        if k * frame - 1 in long_line or k * frame in long_line:
            continue
        if k % 5 == 1:
            body[k * frame - 1] = ord("\n")  # a frame's last byte ends a line
        elif k % 5 == 2:
            body[k * frame - 1: k * frame + 1] = b"\r\n"  # CRLF across two frames
        elif k % 5 == 3:
            body[k * frame - 1] = ord("\r")  # a lone CR ends a frame
            body[k * frame] = ord("x")
    body = body.rstrip(b"\r\n") + b"no final newline"
    assert b"L" * (frame * 3 + 123) in body
    return bytes(body)


@pytest.mark.parametrize("block,split", [("4K", "8k"), ("64K", "40k")])
@pytest.mark.parametrize("line_sep", ["\n", None], ids=["lineSep-LF", "lineSep-default"])
def test_frames_cut_anywhere_in_lines(spark, weir_bin, tmp_path, block, split, line_sep):
    frame = 4096 if block == "4K" else 65536
    data = edge_content(frame, seed=len(block))
    plain = tmp_path / "edge.txt"
    plain.write_bytes(data)
    packed = compress(weir_bin, plain, tmp_path / "edge.txt.zst", "-B", block)
    offsets = [o for o, _, _ in seek_table(packed)]
    assert len(offsets) == -(-len(data) // frame)
    set_split(spark, split)
    expected = stats(read_text(spark, plain, line_sep))
    df = read_text(spark, packed, line_sep)
    assert filled_partitions(df) >= 4
    assert stats(df) == expected
    if line_sep == "\n":
        lines, content = line_truth(data)
        assert (expected[0], expected[2]) == (lines, content)


def test_concatenated_weir_files_split_at_every_part(spark, weir_bin, tmp_path):
    parts = [text_bytes(600_000 + 1000 * i, seed=100 + i) for i in range(3)]
    packed = []
    for i, part in enumerate(parts):
        (tmp_path / f"p{i}").write_bytes(part)
        packed.append(compress(weir_bin, tmp_path / f"p{i}", tmp_path / f"p{i}.zst", "-B", "64K"))
    plain = tmp_path / "all.txt"
    plain.write_bytes(b"".join(parts))
    joined = tmp_path / "all.txt.zst"
    joined.write_bytes(b"".join(p.read_bytes() for p in packed))
    set_split(spark, "64k")
    expected = stats(read_text(spark, plain))
    df = read_text(spark, joined)
    assert filled_partitions(df) >= 6  # every part's frames, not only the last part's
    assert stats(df) == expected
    assert (expected[0], expected[2]) == line_truth(plain.read_bytes())


def test_stock_zstd_before_a_weir_file_is_read_whole_then_split(spark, weir_bin, tmp_path):
    """A prefix no seek table lists (here zstd's one-frame file) is one block, never wrong."""
    head, tail = text_bytes(500_000, seed=7), text_bytes(700_000, seed=8)
    (tmp_path / "head").write_bytes(head)
    (tmp_path / "tail").write_bytes(tail)
    stock = subprocess.run(["zstd", "-q", "-c", str(tmp_path / "head")], check=True, capture_output=True).stdout
    weir = compress(weir_bin, tmp_path / "tail", tmp_path / "tail.zst", "-B", "64K").read_bytes()
    joined = tmp_path / "mixed.txt.zst"
    joined.write_bytes(stock + weir)
    plain = tmp_path / "mixed.txt"
    plain.write_bytes(head + tail)
    set_split(spark, "64k")
    df = read_text(spark, joined)
    assert stats(df) == stats(read_text(spark, plain))
    assert filled_partitions(df) >= 3


def test_stock_one_frame_zst_is_one_split_and_whole(spark, tmp_path):
    if not shutil.which("zstd"):
        pytest.skip("no zstd")  # scripts/setup installs it
    data = text_bytes(3_000_000, seed=9)
    plain = tmp_path / "stock.txt"
    plain.write_bytes(data)
    packed = tmp_path / "stock.txt.zst"
    subprocess.run(["zstd", "-q", "-f", str(plain), "-o", str(packed)], check=True)
    set_split(spark, "256k")
    df = read_text(spark, packed)
    assert df.rdd.getNumPartitions() >= 4  # Spark planned splits ...
    assert filled_partitions(df) == 1  # ... and the first read the whole file
    assert stats(df) == stats(read_text(spark, plain))
    assert (stats(df)[0], stats(df)[2]) == line_truth(data)


def test_csv_with_a_header_across_splits(spark, weir_bin, tmp_path):
    rows = ["id,word,note"] + [f"{i},w{i * 7919 % 10007},note {'x' * (i % 97)}" for i in range(60_000)]
    plain = tmp_path / "table.csv"
    plain.write_text("\n".join(rows) + "\n")
    packed = compress(weir_bin, plain, tmp_path / "table.csv.zst", "-B", "64K")
    set_split(spark, "64k")
    df = spark.read.option("header", True).csv(str(packed))
    assert df.columns == ["id", "word", "note"]
    assert filled_partitions(df) >= 4
    assert df.count() == 60_000
    assert df.filter("id = 'id'").count() == 0
    assert df.selectExpr("sum(cast(id as bigint))").collect()[0][0] == sum(range(60_000))
    assert stats(df, "note") == stats(spark.read.option("header", True).csv(str(plain)), "note")


def test_json_lines_across_splits(spark, weir_bin, tmp_path):
    plain = tmp_path / "events.json"
    plain.write_text("".join(f'{{"n": {i}, "s": "{"y" * (i % 131)}"}}\n' for i in range(50_000)))
    packed = compress(weir_bin, plain, tmp_path / "events.json.zst", "-B", "64K")
    set_split(spark, "48k")
    df = spark.read.json(str(packed))
    assert filled_partitions(df) >= 4
    assert df.selectExpr("count(*)", "sum(n)", "sum(length(s))").collect()[0] == tuple(
        spark.read.json(str(plain)).selectExpr("count(*)", "sum(n)", "sum(length(s))").collect()[0])
    assert df.count() == 50_000


def test_splits_of_equal_size_get_equal_content(spark, weir_bin, tmp_path):
    """Frames are placed by where their content starts, not their bytes: a file whose first
    frames compress 100 times better than the rest, cut in two halves, is read as two halves of
    its content (placed by compressed bytes, the first half would hold about 3/4 of it)."""
    dense = b"".join(b"the same line, %d\n" % (i % 10) for i in range(110_000))  # ~2 MB, ~100x smaller
    data = dense + text_bytes(len(dense), seed=61)
    plain = tmp_path / "lopsided.txt"
    plain.write_bytes(data)
    packed = compress(weir_bin, plain, tmp_path / "lopsided.txt.zst", "-B", "64K")
    size = packed.stat().st_size
    set_split(spark, str(size // 2 + 1))
    df = read_text(spark, packed)
    per_partition = [row[1] for row in df.groupBy(F.spark_partition_id()).agg(F.sum(F.length("value"))).collect()]
    assert len(per_partition) == 2
    assert max(per_partition) <= 0.55 * sum(per_partition)
    assert stats(df) == stats(read_text(spark, plain))
