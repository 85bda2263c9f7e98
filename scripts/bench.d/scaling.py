"""scripts/bench's scaling section: weir, zstd, pzstd with 1, 2, 4 ... N threads, level 3, main corpus -> /dev/null.
runner.py calls run(bench) (bench: its Bench, the run's arguments and state); report.py calls render(data)."""

import harness
from corpus import warm
from formatting import BASIC, cases, cells, commands, f_num, f_ok, f_ratio, f_tool, grouped, med, ratio, table


def run(bench):
    warm(bench.main)
    cases = []
    for t in bench.a.scaling_threads:
        for fam, tool, base in harness.comp_tools(bench, threads=t, with_single=False):
            cases.append(harness.make_case(bench, "scaling", "compress", fam, tool, base, "null", bench.main,
                                           level=3, threads=t, group="T%d" % t))
    harness.section(bench, "scaling", "Thread scaling, level 3, main corpus → /dev/null", cases, bench.a.runs)


def render(data):
    cs = cases(data, "scaling")
    rows = []
    for fc in grouped(cs, lambda c: c["family"]).values():
        base = next((c for c in fc if c["threads"] == 1), None)
        for c in sorted(fc, key=lambda c: c["threads"]):
            sp = ratio(med(c, "mbps"), med(base, "mbps"))
            rows.append([f_tool(c), c["threads"]] + cells(c, BASIC) + [f_ratio(sp), f_num(
                sp / c["threads"] if sp else None), f_ok(c)])
    return table(["Tool", "Threads", "MB/s", "Wall s", "Spread", "CPU s", "Peak RSS MiB", "Speed-up vs 1 thread",
                  "Efficiency", "Runs ok"], rows) + "\n" + commands(cs)
