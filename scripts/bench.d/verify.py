"""scripts/bench's verify section (issue 42): what --verify costs, weir -TN with and without it beside zstd -TN,
file->/dev/null, level 3 on the main corpus and level 19 on the lean RSS slice."""

import corpus
import harness
from formatting import cases, col, commands, f_ratio, grouped, in_groups, of, spec_table, vs


def measure(bench):
    """Issue 42: what --verify costs.  weir -TN with and without it, beside
    zstd -TN, file->/dev/null: level 3 on the main corpus, level 19 on the
    lean RSS slice (decoding costs the same; compressing, much more)."""
    a, n = bench.a, bench.N
    high = corpus.head(bench, a.lean_rss_size)
    bench.data["corpus"]["verify_high"] = corpus.describe(bench, high, "verify: slice for level 19")
    weir = [a.weir, "-q", "-T%d" % n] + bench.weir_extra
    tools = [("weir", "weir -T%d" % n, weir), ("weir:verify", "weir -T%d --verify" % n, weir + ["--verify"]),
             ("zstd", "zstd -T%d" % n, [a.zstd, "-q", "-T%d" % n])]
    harness.grid(bench, "verify", "--verify: every frame decoded and compared before it is written", [
        ("null", inp, tools, {"level": level, "threads": n, "group": "level %d" % level})
        for level, inp in ((3, bench.main), (19, high))], a.runs)


def report(data):
    cs = in_groups(cases(data, "verify"), lambda c: c["group"])
    plain, z = ({g: of(gc, f) for g, gc in grouped(cs, lambda c: c["group"]).items()} for f in ("weir", "zstd"))
    return spec_table(cs, [("Level", lambda c: c["group"]), *col("Tool", "MB/s", "Wall s", "CPU s", "Peak RSS MiB"),
                           ("Wall ÷ weir", lambda c: f_ratio(vs(c, plain[c["group"]], "wall"))),
                           ("CPU ÷ weir", lambda c: f_ratio(vs(c, plain[c["group"]], "cpu"))),
                           ("MB/s ÷ zstd -T%d" % data["meta"]["threads"], lambda c: f_ratio(vs(c, z[c["group"]]))),
                           *col("Runs ok")]) + "\n" + commands(cases(data, "verify"))
