"""scripts/bench's oneframe section (issue 81): one zstd frame, as `zstd` writes most .zst files: weir -d -TN,
zstd -d and pzstd -d -pN on the corpus's first 30 MB and 120 MB written by `zstd -3 FILE` (its size in the frame's
header), the whole corpus by `zstd -3 -TN` and `zstd -1 -TN` (one frame; zstd declares the size of a file) and the
120 MB by `zstd -19 -TN` and `zstd --long=27 -19 -TN`, from the file and through `cat FILE |`, to
/dev/null; medians and peak RSS. weir decodes one frame on all its workers, block by block, streamed (-T1: on one
core, by libzstd): the memory target is zstd -d's peak + 32 MiB (docs/decompression.md, "One frame from zstd").

Each input is made once, untimed, and checked with zstd -d | cmp; every case's output once (verify_once)."""

import os
import shutil

import harness
import verification
from corpus import file_size, head, warm
from formatting import BASIC, COLS, MODE_TITLE, col, commands, f_bytes, f_num, f_ratio, grouped, med, of, spec_table, vs
from weirtools.tables import render

SLICES = (30 * 1000 * 1000, 120 * 1000 * 1000)
MODES = ("null", "pipenull")


def inputs(bench, folder):
    """The single-frame inputs: (label, path, original), made once."""
    n, made = bench.N, []
    for size in SLICES:
        orig = head(bench, size)
        path = os.path.join(folder, "head-%d.zst" % size)
        argv = [bench.a.zstd, "-q", "-3", "-f", orig, "-o", path]
        made.append({"label": "first %d MB, `zstd -3 FILE` (size in header)" % (file_size(orig) // 10**6),
                     "path": path, "orig": orig, "key": "head%d" % size}
                    | verification.prepared(bench, argv, bench.disp(argv), path, orig))
    # Issue 81's other rows: -1 (raw-heavy literals, the decoder's weakest) on the whole corpus, and -19 (8 MiB
    # window, btultra's tables) on the 120 MB slice: -19 of the whole corpus takes a quarter of an hour to make.
    # --long=27 -19 (a 128 MiB window: the goal's fourth row) likewise on the 120 MB slice.
    wholes = ((3, bench.main, "whole", []), (1, bench.main, "whole1", []), (19, head(bench, SLICES[1]), "head19", []),
              (19, head(bench, SLICES[1]), "head19long", ["--long=27"]))
    for level, orig, key, more in wholes:
        path = os.path.join(folder, "%s.zst" % key)
        argv = [bench.a.zstd, "-q", *more, "-%d" % level, "-T%d" % n, "-f", orig, "-o", path]
        what = "whole corpus" if orig == bench.main else "first %d MB" % (file_size(orig) // 10**6)
        flags = " ".join([*more, "-%d" % level, "-T%d" % n])
        made.append({"label": "%s, `zstd %s`" % (what, flags), "path": path, "orig": orig, "key": key}
                    | verification.prepared(bench, argv, bench.disp(argv), path, orig))
    return made


def measure(bench):
    folder = os.path.join(bench.work, "oneframe-inputs")
    os.makedirs(folder, exist_ok=True)
    sources = inputs(bench, folder)
    cases = []
    for s in sources:
        warm(s["path"])
        for mode in MODES:
            for fam, tool, base in harness.dec_tools(bench):
                cases.append(harness.make_case(
                    bench, "oneframe", "decompress", fam, tool, base, mode, s["path"], threads=bench.N,
                    group="%s/%s" % (s["key"], mode), data_bytes=file_size(s["orig"]), verify="plain",
                    orig=s["orig"], tag="%s_%s" % (s["key"], mode),
                    extra={"source": s["key"], "source_label": s["label"]}))
    harness.section(bench, "oneframe", "One frame written by zstd (issue 81)", cases, bench.a.runs,
                    extra={"sources": [{k: v for k, v in s.items() if k not in ("path", "orig")} for s in sources]})
    if not bench.a.keep_work:
        shutil.rmtree(folder, ignore_errors=True)


def report(data):
    n, s = data["meta"]["threads"], data["sections"]["oneframe"]

    def row_label(c: dict) -> str:
        return "%s, %s" % (c["source_label"], MODE_TITLE[c["mode"]])

    def rss_above(c: dict, z: dict) -> str:
        a, b = med(c, "rss_kb"), med(z, "rss_kb")
        return f_num((a - b) / 1024) if a is not None and b is not None else "–"

    groups = grouped(s["cases"], row_label)
    peers = [[label, f_ratio(vs(of(gc, "weir"), of(gc, "zstd"))), f_ratio(vs(of(gc, "weir"), of(gc, "pzstd"))),
              COLS["Peak RSS MiB"](of(gc, "weir")), COLS["Peak RSS MiB"](of(gc, "zstd")),
              rss_above(of(gc, "weir"), of(gc, "zstd"))] for label, gc in groups.items()]
    return "".join([
        render(["Input", "Bytes", "Frames (zstd -l)", "Made with"], [
            [x["label"], f_bytes(x["bytes"]), x.get("frames") or "–", "`%s`" % x["cmd"]]
            for x in s.get("sources", [])]),
        "\n", spec_table(s["cases"], [("Input, mode", row_label), ("Decoder", COLS["Tool"]),
                                      *col(*BASIC, "Runs ok")]),
        "\nweir -d beside its peers on the same input (speed: >1 means weir is faster; the memory target: weir's "
        "peak at most zstd -d's + 32 MiB):\n\n",
        render(["Input, mode", "Speed ÷ zstd -d", "Speed ÷ pzstd -d -p%d" % n, "weir peak MiB", "zstd -d peak MiB",
               "weir − zstd MiB"], peers),
        "\n\n", commands(s["cases"], ["# inputs"] + [x["cmd"] for x in s.get("sources", [])] + ["# timed"])])
