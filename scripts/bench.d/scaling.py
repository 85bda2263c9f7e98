"""scripts/bench's scaling section: weir, zstd, pzstd with 1, 2, 4 ... N threads, level 3, main corpus -> /dev/null."""

import harness
from formatting import BASIC, cases, col, commands, f_num, f_ratio, grouped, med, ratio, spec_table


def measure(bench):
    harness.grid(bench, "scaling", "Thread scaling, level 3, main corpus → /dev/null", [
        ("null", bench.main, harness.comp_tools(bench, threads=t, with_single=False),
         {"level": 3, "threads": t, "group": "T%d" % t}) for t in bench.a.scaling_threads], bench.a.runs)


def report(data):
    fams = grouped(cases(data, "scaling"), lambda c: c["family"])
    cs = [c for fc in fams.values() for c in sorted(fc, key=lambda c: c["threads"])]
    one = {f: next((c for c in fc if c["threads"] == 1), None) for f, fc in fams.items()}

    def up(c: dict) -> float | None:  # the speed-up over the same tool's one thread
        return ratio(med(c, "mbps"), med(one[c["family"]], "mbps"))

    return spec_table(cs, [*col("Tool"), ("Threads", lambda c: c["threads"]), *col(*BASIC),
                           ("Speed-up vs 1 thread", lambda c: f_ratio(up(c))),
                           ("Efficiency", lambda c: f_num(up(c) / c["threads"] if up(c) else None)),
                           *col("Runs ok")]) + "\n" + commands(cases(data, "scaling"))
