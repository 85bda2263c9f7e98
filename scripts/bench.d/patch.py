"""scripts/bench's patch section (issue 50): weir --patch-from against zstd --patch-from on a 200 MB slice of the
corpus and a copy of it with 40 random edits: patch size against zstd's, wall against zstd -T2's, peak RSS; medians.

Each patch is decoded by the other tool (weir's by zstd, zstd's by weir) and compared with the edited copy."""

import os
import random

import harness
from formatting import cases, col, commands, f_bytes, f_num, f_ratio, find, spec_table, stat, vs

SLICE = 200 * 1000 * 1000
EDITS = 40


def make_pair(corpus: str, folder: str) -> tuple[str, str]:
    """OLD: the first 200 MB of the corpus; NEW: OLD with 40 edits (seeded): each replaces, inserts or deletes up to
    64 KiB at a random place. Returns their paths."""
    old, new = os.path.join(folder, "patch-old"), os.path.join(folder, "patch-new")
    with open(corpus, "rb") as f:
        data = f.read(SLICE)
    with open(old, "wb") as f:
        f.write(data)
    rng = random.Random(50)
    edited = bytearray(data)
    for _ in range(EDITS):
        at, length = rng.randrange(len(edited)), rng.randrange(1, 1 << 16)
        kind = rng.choice(("replace", "insert", "delete"))
        if kind == "replace":
            edited[at:at + length] = rng.randbytes(length)
        elif kind == "insert":
            edited[at:at] = rng.randbytes(length)
        else:
            del edited[at:at + length]
    with open(new, "wb") as f:
        f.write(edited)
    return old, new


def measure(bench) -> None:
    a, n = bench.a, bench.N
    old, new = make_pair(bench.main, bench.work)
    weir, zstd = [a.weir, "-q", f"-T{n}", *bench.weir_extra], [a.zstd, "-q"]
    patch = ["--patch-from=" + old]
    cases = [harness.make_case(bench, "patch", "compress", fam, tool, base, "file", new, threads=n, group="patch",
                               flags=patch, verify="decoded", extra={"decoder": [other, "-q", "-dc", *patch]})
             for fam, tool, base, other in (("weir", f"weir -T{n}", weir, a.zstd),
                                            ("zstd", f"zstd -T{n}", [*zstd, f"-T{n}"], a.weir),
                                            ("zstd-T1", "zstd", zstd, a.weir))]
    try:
        harness.section(bench, "patch", "--patch-from (200 MB slice, 40 edits)", cases, a.runs)
    finally:
        for path in (old, new):
            os.unlink(path)


def report(data: dict) -> str:
    cs, z = cases(data, "patch"), find(data, "patch", family="zstd")
    return spec_table(cs, [*col("Tool"), ("Patch bytes", stat(f_bytes, "out_bytes")),
                           ("vs zstd -T", lambda c: f_ratio(vs(c, z, "out_bytes"), 3)), ("Wall s", stat(f_num, "wall")),
                           ("vs zstd -T (speed)", lambda c: f_ratio(vs(z, c, "wall"))), *col("CPU s", "Peak RSS MiB"),
                           ("vs zstd -T", lambda c: f_ratio(vs(c, z, "rss_kb"))), *col("Runs ok")]) + \
        "\n" + commands(cs)
