"""scripts/bench's small section: a 5 MB file (--small-size), file->file, wall time with start-up."""

import harness
from corpus import file_size
from formatting import cases, col, commands, f_ms, f_ratio, find, human, spec_table, stat, vs


def measure(bench):
    harness.grid(bench, "small", "Small file (%s), level 3, file→file" % human(file_size(bench.small)), [
        ("file", bench.small, harness.comp_tools(bench), {"level": 3, "threads": bench.N, "group": "small"})],
        bench.a.small_runs)


def report(data):
    cs, z = cases(data, "small"), find(data, "small", family="zstd")
    return spec_table(cs, [*col("Tool"), ("Wall ms (median)", stat(f_ms, "wall")), ("Min", stat(f_ms, "wall_min")),
                           ("Max", stat(f_ms, "wall_max")), ("CPU ms", stat(f_ms, "cpu")),
                           *col("Peak RSS MiB", "Output bytes"), ("Wall ÷ zstd -T%d" % data["meta"]["threads"],
                                                                  lambda c: f_ratio(vs(c, z, "wall"))),
                           *col("Runs ok")]) + "\n" + commands(cs)
