"""scripts/bench's small section: a 5 MB file (--small-size), file->file, wall time with start-up."""

import harness
from corpus import file_size, warm
from formatting import cases, col, commands, f_ms, f_ratio, find, human, spec_table, stat, vs


def run(bench):
    warm(bench.small)
    cases = []
    for fam, tool, base in harness.comp_tools(bench):
        cases.append(harness.make_case(bench, "small", "compress", fam, tool, base, "file", bench.small,
                                       level=3, threads=bench.N, group="small"))
    harness.section(bench, "small", "Small file (%s), level 3, file→file" % human(file_size(bench.small)),
                    cases, bench.a.small_runs)


def render(data):
    cs, z = cases(data, "small"), find(data, "small", family="zstd")
    return spec_table(cs, [*col("Tool"), ("Wall ms (median)", stat(f_ms, "wall")), ("Min", stat(f_ms, "wall_min")),
                           ("Max", stat(f_ms, "wall_max")), ("CPU ms", stat(f_ms, "cpu")),
                           *col("Peak RSS MiB", "Output bytes"), ("Wall ÷ zstd -T%d" % data["meta"]["threads"],
                                                                  lambda c: f_ratio(vs(c, z, "wall"))),
                           *col("Runs ok")]) + "\n" + commands(cs)
