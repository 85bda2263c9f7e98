"""Writing seekable zstd from Spark, read back by Spark, zstd, weir and pyzstd; a damaged frame
fails its task naming the file and the frame's offset (issue 51, part 2)."""

from __future__ import annotations

import re
import subprocess

import pytest
from conftest import compress, lie_in_table, seek_table, text_bytes
from helpers import filled_partitions, read_text, stats

CODEC = "weir.hadoop.WeirCodec"


def test_write_makes_seekable_parts_every_reader_reads(spark, weir_bin, tmp_path):
    plain = tmp_path / "source.txt"
    plain.write_bytes(text_bytes(6_000_000, seed=21))
    source = read_text(spark, plain)
    out = tmp_path / "out"
    (source.repartition(3).write.option("compression", CODEC).option("lineSep", "\n")
     .option("weir.zstd.frame.size", "256k").text(str(out)))
    parts = sorted(out.glob("part-*"))
    assert len(parts) == 3
    assert all(p.name.endswith(".zst") for p in parts)
    lines = []
    for part in parts:
        content = subprocess.run(["zstd", "-dc", str(part)], check=True, capture_output=True).stdout
        lines += content.split(b"\n")[:-1]
        frames = seek_table(part)
        assert len(frames) == -(-len(content) // (256 << 10))
        assert sum(d for _, _, d in frames) == len(content)
        start = len(content) // 3
        ranged = subprocess.run([weir_bin, "-d", "-c", f"--range={start}:+300000", str(part)],
                                check=True, capture_output=True).stdout
        assert ranged == content[start:start + 300000]
        import pyzstd

        with pyzstd.SeekableZstdFile(str(part)) as f:
            f.seek(start)
            assert f.read(300000) == content[start:start + 300000]
    assert sorted(lines) == sorted(plain.read_bytes().split(b"\n"))
    spark.conf.set("spark.sql.files.maxPartitionBytes", "256k")
    spark.conf.set("spark.sql.files.openCostInBytes", "0")
    back = read_text(spark, out)
    assert filled_partitions(back) > 3  # the parts themselves split
    assert stats(back) == stats(source)


def test_the_level_setting_is_the_level_written(spark, tmp_path):
    """hadoop/README.md: weir.zstd.level sets the level, 3 unless given: the same text written without it is
    byte for byte the text written at 3, at 19 it is smaller than at 1, and every part reads back the same."""
    plain = tmp_path / "source.txt"
    # Lines that compress (random text does not: at 19 it came out larger than at 1).
    plain.write_bytes("\n".join(f"{i:08d} weir level {i % 97} " + "abcdefghij"[i % 10] * (i % 13)
                                for i in range(120_000)).encode())
    source = read_text(spark, plain)
    parts = {}
    for level in ("1", None, "3", "19"):
        out = tmp_path / f"level-{level}"
        writer = source.coalesce(1).write.option("compression", CODEC).option("lineSep", "\n")
        if level is not None:
            writer = writer.option("weir.zstd.level", level)
        writer.text(str(out))
        (part,) = out.glob("part-*.zst")
        parts[level] = part.read_bytes()
        content = subprocess.run(["zstd", "-dc", str(part)], check=True, capture_output=True).stdout
        assert sorted(content.split(b"\n")[:-1]) == sorted(plain.read_bytes().split(b"\n"))
    assert parts[None] == parts["3"]
    assert parts["3"] != parts["1"]
    assert len(parts["19"]) < len(parts["1"])


def test_damaged_frame_fails_naming_file_and_offset(spark, weir_bin, tmp_path):
    plain = tmp_path / "good.txt"
    plain.write_bytes(text_bytes(2_000_000, seed=31))
    packed = compress(weir_bin, plain, tmp_path / "bad.txt.zst", "-B", "64K")
    offset, size, _ = seek_table(packed)[10]
    raw = bytearray(packed.read_bytes())
    raw[offset + size // 2] ^= 0x55
    packed.write_bytes(bytes(raw))
    spark.conf.set("spark.sql.files.maxPartitionBytes", "64k")
    spark.conf.set("spark.sql.files.openCostInBytes", "0")
    with pytest.raises(Exception) as failure:
        read_text(spark, packed).count()
    message = str(failure.value)
    # The codec's own message names the file (it named the stream object).
    assert re.search(rf"weir-hadoop: \S*bad\.txt\.zst: the zstd frame at offset {offset} ", message), message


def test_a_lying_seek_table_fails_naming_the_file_and_frame(spark, weir_bin, tmp_path):
    # Issue 59: a header's size beats the table, a table that disagrees is refused; a size only
    # the table gives (pyzstd's frames declare none) is checked when its frame is decoded.
    import pyzstd

    plain = tmp_path / "lines.txt"
    plain.write_bytes(text_bytes(2_000_000, seed=41))
    weir_file = compress(weir_bin, plain, tmp_path / "weir.txt.zst", "-B", "64K")
    pyzstd_file = tmp_path / "pyzstd.txt.zst"
    with pyzstd.SeekableZstdFile(str(pyzstd_file), "wb", max_frame_content_size=64 << 10) as output:
        output.write(plain.read_bytes())
    spark.conf.set("spark.sql.files.maxPartitionBytes", "64k")
    spark.conf.set("spark.sql.files.openCostInBytes", "0")
    expected = {
        weir_file: "lists 66536 bytes of content, but the frame declares 65536",
        pyzstd_file: "lists 66536 bytes of content, but the frame decodes to 65536",
    }
    for path, detail in expected.items():
        lie_in_table(path, 10, 1000)
        offset = seek_table(path)[10][0]
        with pytest.raises(Exception) as failure:
            read_text(spark, path).count()
        message = str(failure.value)
        pattern = (rf"weir-hadoop: \S*{re.escape(path.name)}: the seek table does not match the frames: "
                   rf"block 10 of \d+ {detail} \(the zstd frame at offset {offset}\)")
        assert re.search(pattern, message), message
