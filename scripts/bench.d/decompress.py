"""scripts/bench's decompress section: weir -d -TN, zstd -d, pzstd -d -pN on each tool's level-3 output of the main
corpus, in each mode, beside the write limit (write_zeros.py). dec_input also makes the lean section's inputs."""

import os
import shutil
import sys

import harness
import verification
from corpus import file_size, warm
from formatting import (
    BASIC,
    COLS,
    MODE_TITLE,
    col,
    commands,
    f_bytes,
    f_mbps,
    f_ratio,
    find,
    grouped,
    human,
    med,
    of,
    spec_table,
    vs,
)
from timing import synced
from weirtools.tables import render

HERE = os.path.dirname(os.path.abspath(__file__))


def measure(bench):
    """Decode each tool's level-3 output with each decoder."""
    warm(bench.main)
    n = bench.N
    src_dir = os.path.join(bench.work, "dec-inputs")
    os.makedirs(src_dir, exist_ok=True)
    sources = []
    for fam, _, base in harness.comp_tools(bench, with_single=False):
        if ":" in fam:
            continue  # a variant of weir: its output is weir's
        sources.append(dec_input(bench, fam, base, bench.main, src_dir))
    for s in sources:
        warm(s["path"])
    cases = []
    for s in sources:
        for mode in bench.a.modes:
            for fam, tool, base in harness.dec_tools(bench):
                c = harness.make_case(bench, "decompress", "decompress", fam, tool, base, mode, s["path"],
                                      threads=n, group="%s/%s" % (s["family"], mode),
                                      data_bytes=file_size(bench.main), verify="plain", orig=bench.main,
                                      extra={"source": s["family"], "source_label": s["label"]})
                c["input_bytes"] = s["bytes"]
                cases.append(c)
    if "file" in bench.a.modes:
        cases.append(write_limit(bench, file_size(bench.main)))
    harness.section(bench, "decompress", "Decompression of each tool's level-3 output (%s uncompressed)" % human(
        file_size(bench.main)), cases, bench.a.runs,
        extra={"sources": [{k: v for k, v in s.items() if k != "path"} for s in sources]})
    if not bench.a.keep_work:
        shutil.rmtree(src_dir, ignore_errors=True)


def write_limit(bench, size):
    """What writing SIZE bytes to a file costs here, until on disk (issue 41):
    the bound of every decoder's file output, timed as their runs are.
    Zeros written as weir's writer writes (write_zeros.py): dd's 1 MiB
    writes into the page cache were slower here than weir decoding."""
    out = os.path.join(bench.work, "write_limit.out")
    argv = [sys.executable, os.path.join(HERE, "write_zeros.py"), str(size), out]
    return harness.custom_case(bench, "decompress", "write-limit", "zeros, written as weir writes", "limit",
                               "write limit", synced(argv, [out]), "zeros", "/dev/zero", None, size, out=out,
                               cmd=" ".join(argv).replace(out, bench.disp_path(out)) + " && sync " +
                               bench.disp_path(out), input="/dev/zero", source="limit",
                               source_label="/dev/zero")


def dec_input(bench, fam, base, inp, src_dir):
    """A decompression input, made once (untimed): INP compressed at level
    3 by one tool, checked with zstd -d | cmp.  Returns its description."""
    n = bench.N
    path = os.path.join(src_dir, "%s.%s.zst" % (os.path.basename(inp), fam))
    argv = base + ["-3", "-f", inp, "-o", path]
    label = {"weir": "weir -T%d output" % n, "zstd": "zstd -T%d output (single frame)" % n,
             "pzstd": "pzstd -p%d output" % n}[fam]
    return {"family": fam, "label": label, "path": path} | verification.prepared(bench, argv, bench.disp(argv), path,
                                                                                inp)


def report(data):
    n, s, lim = data["meta"]["threads"], data["sections"]["decompress"], find(data, "decompress", family="limit")

    def row_label(c: dict) -> str:
        return "the write limit, file" if c is lim else "%s, %s" % (c["source_label"], MODE_TITLE[c["mode"]])

    groups = grouped([c for c in s["cases"] if c is not lim], row_label)
    peers = [[label] + [f_ratio(vs(of(gc, "weir"), of(gc, f), k)) for k, f in (
        ("mbps", "zstd"), ("mbps", "pzstd"), ("cpu", "zstd"), ("rss_kb", "zstd"))] + (
        [f_ratio(vs(of(gc, "weir"), lim) if gc[0]["mode"] == "file" else None)] if lim else [])
        for label, gc in groups.items()]
    out = [render(["Input", "Bytes", "Frames (zstd -l)", "Made with"], [
        [x["label"], f_bytes(x["bytes"]), x.get("frames") or "–", "`%s`" % x["cmd"]] for x in s.get("sources", [])]),
        "\n", spec_table([c for gc in groups.values() for c in gc] + ([lim] if lim else []), [
            ("Input, mode", row_label), ("Decoder", COLS["Tool"]), *col(*BASIC, "Runs ok")]),
        "\nweir -d ÷ peers on the same input (speed: >1 means weir is faster):\n\n",
        render(["Input, mode", "Speed ÷ zstd -d", "Speed ÷ pzstd -d -p%d" % n, "CPU ÷ zstd -d", "RSS ÷ zstd -d"] + (
            ["Speed ÷ the write limit"] if lim else []), peers)]
    if lim:
        dsingle = data.get("sections", {}).get("ceiling", {}).get("single_dec_mbps")
        out.append("\nEvery decoder's file output is bounded by the page cache's write limit: writing as many bytes "
                   "of zeros to a file as weir's writer writes them (128 KiB writes, writeback started every 32 MiB), "
                   "until on disk, %s MB/s here (in the same rounds), beside the decoding "
                   "limit, %d × zstd -b3 -T1's decompression (the ceiling section): %s MB/s." % (
                       f_mbps(med(lim, "mbps")), n, f_mbps(n * dsingle if dsingle else None)))
    return "".join(out) + "\n\n" + commands(s["cases"], ["# inputs"] + [x["cmd"] for x in s.get("sources", [])]
                                              + ["# timed"])
