"""scripts/bench's formats section (issue 40): weir --format=gzip, xz, lz4 beside pigz, gzip, xz, lz4, each output
decoded by its own tool; and decoding a stock gzip -6 file."""

import os
import subprocess

import harness
from corpus import file_size
from formatting import cases, col, commands, f_ratio, grouped, in_groups, of, spec_table, vs
from timing import log


def measure(bench):
    """Issue 40: the other formats, weir -TN --format=… beside each format's
    own tools, stdin->stdout (gzip, xz and lz4 write only to stdout with a
    name of their choosing), each output decoded by the format's own tool;
    and decoding a stock gzip -6 file, file->/dev/null.  xz on the slice:
    at level 6 it is 20x slower than the rest."""
    a, n = bench.a, bench.N
    weir = [a.weir, "-q", "-T%d" % n] + bench.weir_extra
    groups = [  # (group, input, level, decoder, tools)
        ("gzip -6", bench.main, 6, ["gzip", "-dc"], [
            ("weir", "weir -T%d --format=gzip" % n, weir + ["--format=gzip"]),
            ("pigz", "pigz -p%d" % n, ["pigz", "-p%d" % n]), ("gzip", "gzip", ["gzip"])]),
        ("gzip -1", bench.main, 1, ["gzip", "-dc"], [
            ("weir", "weir -T%d --format=gzip" % n, weir + ["--format=gzip"]),
            ("pigz", "pigz -p%d" % n, ["pigz", "-p%d" % n])]),
        ("xz -6", bench.slice, 6, ["xz", "-dc"], [
            ("weir", "weir -T%d --format=xz" % n, weir + ["--format=xz"]),
            ("xz", "xz -T%d" % n, ["xz", "-T%d" % n])]),
        ("lz4 -1", bench.main, 1, ["lz4", "-dc"], [
            ("weir", "weir -T%d --format=lz4" % n, weir + ["--format=lz4"]), ("lz4", "lz4", ["lz4", "-q"])]),
    ]
    rows = [("stdio", inp, tools, {"level": level, "threads": n, "group": group, "verify": "decoded",
                                   "extra": {"decoder": decoder}}) for group, inp, level, decoder, tools in groups]
    stock = os.path.join(bench.work, "stock.gz")
    log("bench: preparing the stock gzip file: gzip -6 -c %s > %s" % (bench.disp_path(bench.main), stock))
    with open(bench.main, "rb") as fin, open(stock, "wb") as fout:
        subprocess.run(["gzip", "-6", "-c"], stdin=fin, stdout=fout, check=True)
    rows.append(("null", stock, (("weir", "weir -d -T%d" % n, weir), ("gzip", "gzip -d", ["gzip"]),
                                 ("pigz", "pigz -d -p%d" % n, ["pigz", "-p%d" % n])), {
        "op": "decompress", "threads": n, "group": "gunzip", "data_bytes": file_size(bench.main), "verify": "plain",
        "orig": bench.main, "extra": {"input_bytes": file_size(stock)}}))
    harness.grid(bench, "formats", "Other formats (issue 40): gzip, xz and lz4 beside their own tools", rows, a.runs)
    os.unlink(stock)


def report(data):
    """Issue 40: each format's group, speed and size beside weir's."""
    cs = in_groups(cases(data, "formats"), lambda c: c["group"])
    weir = {g: of(gc, "weir") for g, gc in grouped(cs, lambda c: c["group"]).items()}
    return spec_table(cs, [("Case", lambda c: c["group"]), *col("Tool", "MB/s", "Wall s", "CPU s", "Peak RSS MiB",
                                                                 "Output bytes"),
                           ("weir's speed ÷", lambda c: f_ratio(vs(weir[c["group"]], c))),
                           ("weir's size ÷", lambda c: f_ratio(vs(weir[c["group"]], c, "out_bytes"), 3)),
                           *col("Runs ok")]) + "\nSpeeds are of the uncompressed bytes; weir's output is "\
        "decoded by the format's own tool (gzip, xz, lz4) and compared with the input.\n\n" + commands(cs)
