"""scripts/bench's levels section: levels 1 and 19 (--levels) on the slice, the compress section's tools, file->file
(--level-modes)."""

import compress
import harness
from corpus import file_size, warm
from formatting import human


def run(bench):
    warm(bench.slice)
    cases = []
    for level in bench.a.levels:
        for mode in bench.a.level_modes:
            for fam, tool, base in harness.comp_tools(bench):
                cases.append(harness.make_case(bench, "levels", "compress", fam, tool, base, mode, bench.slice,
                                               level=level, threads=bench.N, group="%d/%s" % (level, mode)))
    harness.section(bench, "levels", "Compression, levels %s, slice (%s)" % (
        " and ".join(map(str, bench.a.levels)), human(file_size(bench.slice))), cases, bench.a.runs)


def render(data):
    return compress.by_groups(data, "levels", ["level", "mode"])
