"""testdata/vectors/generate's zstd-frame/ cases (issue 81): single zstd frames whose blocks, taken
together, hold every kind RFC 8878 defines — raw, RLE and compressed blocks; literals raw, RLE, Huffman
in one and four streams, and with the table repeated; sequences none, and each of their three tables
predefined, RLE, described and repeated; windows from 1 KiB to 128 MiB — and damaged ones. Each case's
expected content is its input (made here, never read back from a decoder); the kinds each frame holds
are read from its headers alone (`features`), and `check_coverage` refuses a folder that misses one.
"""

import random
import struct
import subprocess

import xxhash  # PyPI: the hash a zstd frame's checksum is the low 32 bits of

ZSTD_MAGIC = 0xFD2FB528
LITERALS = ("raw", "rle", "huffman", "treeless")
TABLE_MODES = ("predefined", "rle", "fse", "repeat")
REQUIRED = (
    {"block:raw", "block:rle", "block:compressed", "literals:raw", "literals:rle", "literals:huffman-1",
     "literals:huffman-4", "literals:treeless", "sequences:none"}
    | {f"{table}:{mode}" for table in ("LL", "OF", "ML") for mode in TABLE_MODES}
)


def text(seed, size):
    """`size` bytes of English-like lines: compressible, with a skewed alphabet."""
    rng = random.Random(seed)
    words = [rng.choice(["the", "frame", "block", "window", "of", "and", "a", "zstd", "weir", "table", "literal",
                         "sequence", "offset", "match", "decoder", "stream"]) + rng.choice(["", "s", "ed", "ing"])
             for _ in range(400)]
    out = bytearray()
    while len(out) < size:
        out += (" ".join(rng.choice(words) for _ in range(rng.randint(4, 14))) + ".\n").encode()
    return bytes(out[:size])


def noise(seed, size):
    return random.Random(seed).randbytes(size)


def zstd(data, *flags):
    """One frame of `data` by the real zstd, read from a pipe (its size not declared unless a flag does)."""
    frame = subprocess.run(["zstd", "-q", "-c", *flags], input=data, capture_output=True, check=True).stdout
    assert struct.unpack("<I", frame[:4])[0] == ZSTD_MAGIC
    return frame


def header(frame):
    """(header size, window size or None, single segment, checksum flag) of a frame (RFC 8878 3.1.1.1)."""
    fhd = frame[4]
    single, checksum, dictionary, fcs_flag = (fhd >> 5) & 1, (fhd >> 2) & 1, fhd & 3, fhd >> 6
    pos, window = 5, None
    if not single:
        exponent, mantissa = frame[5] >> 3, frame[5] & 7
        base = 1 << (10 + exponent)
        window = base + base // 8 * mantissa
        pos = 6
    pos += (0, 1, 2, 4)[dictionary]
    pos += (1 if single else 0, 2, 4, 8)[fcs_flag]
    return pos, window, single, checksum


def literals(body):
    """(kind, streams, section size) of a compressed block's literals section (RFC 8878 3.1.1.3.1)."""
    kind, size_format = body[0] & 3, (body[0] >> 2) & 3
    if kind < 2:
        if size_format in (0, 2):
            size, head = body[0] >> 3, 1
        elif size_format == 1:
            size, head = (body[0] >> 4) + (body[1] << 4), 2
        else:
            size, head = (body[0] >> 4) + (body[1] << 4) + (body[2] << 12), 3
        return LITERALS[kind], 0, head + (size if kind == 0 else 1)
    head = (3, 3, 4, 5)[size_format]
    bits = int.from_bytes(body[:head], "little") >> 4
    width = (10, 10, 14, 18)[size_format]
    compressed = (bits >> width) & ((1 << width) - 1)
    return LITERALS[kind], 1 if size_format == 0 else 4, head + compressed


def features(frame):
    """The kinds a frame's blocks hold, read from the block and section headers alone."""
    pos, window, single, _ = header(frame)
    found = set()
    while True:
        bh = int.from_bytes(frame[pos:pos + 3], "little")
        last, kind, size = bh & 1, (bh >> 1) & 3, bh >> 3
        pos += 3
        body = frame[pos:pos + (1 if kind == 1 else size)]
        pos += len(body)
        found.add("block:" + ("raw", "rle", "compressed", "reserved")[kind])
        if kind == 2:
            lit, streams, used = literals(body)
            found.add(f"literals:{lit}" + (f"-{streams}" if streams else ""))
            if lit == "treeless":
                found.add("literals:treeless")
            rest = body[used:]
            count = rest[0]
            if count == 0:
                found.add("sequences:none")
            else:
                modes = rest[1 if count < 128 else 2 if count < 255 else 3]
                for table, shift in (("LL", 6), ("OF", 4), ("ML", 2)):
                    found.add(f"{table}:{TABLE_MODES[(modes >> shift) & 3]}")
        if last:
            break
    found.add("window:single-segment" if single else f"window:{window}")
    return found


def hand_frame(content_size, blocks, checksum_of=None):
    """A single-segment frame (content size in one byte, under 256) of hand-made blocks (kind, body)."""
    out = bytearray(struct.pack("<IBB", ZSTD_MAGIC, 0x24 if checksum_of is not None else 0x20, content_size))
    for i, (kind, size, body) in enumerate(blocks):
        out += (int(i == len(blocks) - 1) | kind << 1 | size << 3).to_bytes(3, "little") + body
    if checksum_of is not None:
        out += struct.pack("<I", xxhash.xxh64(checksum_of).intdigest() & 0xFFFFFFFF)
    return bytes(out)


def cases():
    """(name, about, frame, content or None when it must fail)."""
    t300 = text("t", 300_000)
    made = [
        ("raw-blocks", "random bytes: raw blocks", zstd(noise(1, 40_000), "-3"), noise(1, 40_000)),
        ("rle-blocks", "one byte repeated: RLE blocks", zstd(b"w" * 300_000, "-3"), b"w" * 300_000),
        ("literals-raw", "text, literals not compressed", zstd(t300, "-3", "--no-compress-literals"), t300),
        ("literals-huffman", "text at -3: Huffman literals in four streams, tables of every kind",
         zstd(t300, "-3"), t300),
        ("literals-one-stream", "a short text: Huffman literals in one stream",
         zstd(text("s", 600), "-3"), text("s", 600)),
        ("literals-repeated", "text at -19 in blocks of ~1 KiB: Huffman and sequence tables repeated",
         zstd(t300, "-19", "--target-compressed-block-size=1340"), t300),
        ("window-1k", "a 1 KiB window (windowLog 10), declared in the header",
         zstd(text("w", 50_000), "-3", "--zstd=wlog=10"), text("w", 50_000)),
        ("window-128m", "a 128 MiB window (--long=27), declared in the header, content read from a pipe",
         zstd(t300, "-3", "--long=27"), t300),
        ("no-checksum", "no content checksum", zstd(t300, "-1", "--no-check"), t300),
        ("single-segment", "content size declared, single segment", zstd(t300, "-3", f"--stream-size={len(t300)}"),
         t300),
        ("offsets-repeated", "a period of 7 bytes: one offset code in every sequence (an RLE offsets table)",
         zstd(b"abcdefg" * 20_000 + text("o", 20_000), "-1"), b"abcdefg" * 20_000 + text("o", 20_000)),
    ]
    rle_literals = bytes([0x01 | 30 << 3, ord("q"), 0x00])  # RLE literals, 30 of "q"; no sequences
    made.append(("literals-rle", "by hand: a compressed block of 30 RLE literals and no sequences",
                 hand_frame(30, [(2, len(rle_literals), rle_literals)], b"q" * 30), b"q" * 30))
    # Five sequences, each one literal then 3 bytes from 1 back (literal length code 1, offset code 0:
    # the first repeated offset, 1 at a frame's start; match length code 0: 3): "aaaabbbb…eeee". Every
    # table RLE, no bit of state or extra bits to read: the bitstream is its end marker alone.
    rle_tables = bytes([5 << 3]) + b"abcde" + bytes([5, 0x54, 1, 0, 0, 0x01])
    made.append(("tables-rle", "by hand: literal lengths, offsets and match lengths each one RLE symbol",
                 hand_frame(20, [(2, len(rle_tables), rle_tables)], b"aaaabbbbccccddddeeee"),
                 b"aaaabbbbccccddddeeee"))
    good = {name: frame for name, _, frame, _ in made}
    broken = bytearray(good["literals-huffman"])
    broken[-1] ^= 0x40
    made.append(("checksum-wrong", "the content checksum's last byte changed", bytes(broken), None))
    cut = good["literals-huffman"]
    made.append(("truncated", "cut in its middle", cut[:len(cut) // 2], None))
    reserved = bytearray(hand_frame(30, [(2, len(rle_literals), rle_literals)], b"q" * 30))
    reserved[6] |= 0x06  # the block's type: 3, reserved
    made.append(("block-type-reserved", "by hand: a block of the reserved type 3", bytes(reserved), None))
    return made


def write_cases(folder, write):
    """Writes each case through generate's `write` and checks the folder covers every kind."""
    covered = set()
    for name, about, frame, content in cases():
        found = features(frame) if content is not None else set()
        covered |= found
        expected = {"about": about, "reading": "ok" if content is not None else "fails",
                    "features": sorted(found)}
        if content is not None:
            expected |= {"content_size": len(content), "content_xxh64": "%016x" % xxhash.xxh64(content).intdigest()}
        write(folder, f"{name}.zst", frame, expected)
    missing = REQUIRED - covered
    if missing:
        raise SystemExit(f"zstd-frame/: no case holds {sorted(missing)}: add one")
