"""scripts/bench's small section: a 5 MB file (--small-size), file->file, wall time with start-up.
runner.py calls run(bench) (bench: its Bench, the run's arguments and state); report.py calls render(data)."""

import harness
from corpus import file_size, warm
from formatting import cases, commands, f_bytes, f_mib, f_ms, f_ok, f_ratio, f_tool, find, human, med, table, vs


def run(bench):
    warm(bench.small)
    cases = []
    for fam, tool, base in harness.comp_tools(bench):
        cases.append(harness.make_case(bench, "small", "compress", fam, tool, base, "file", bench.small,
                                       level=3, threads=bench.N, group="small"))
    harness.section(bench, "small", "Small file (%s), level 3, file→file" % human(file_size(bench.small)),
                    cases, bench.a.small_runs)


def render(data):
    n = data["meta"]["threads"]
    cs, z = cases(data, "small"), find(data, "small", family="zstd")
    rows = [[f_tool(c)] + [f_ms(med(c, k)) for k in ("wall", "wall_min", "wall_max", "cpu")] + [
        f_mib(med(c, "rss_kb")), f_bytes(med(c, "out_bytes")), f_ratio(vs(c, z, "wall")), f_ok(c)] for c in cs]
    return table(["Tool", "Wall ms (median)", "Min", "Max", "CPU ms", "Peak RSS MiB", "Output bytes",
                  "Wall ÷ zstd -T%d" % n, "Runs ok"], rows) + "\n" + commands(cs)
