"""scripts/bench's levels section: levels 1 and 19 (--levels) on the slice, the compress section's tools, file->file
(--level-modes)."""

import compress
import harness
from corpus import file_size
from formatting import human


def measure(bench):
    harness.grid(bench, "levels", "Compression, levels %s, slice (%s)" % (
        " and ".join(map(str, bench.a.levels)), human(file_size(bench.slice))), [
        (mode, bench.slice, harness.comp_tools(bench), {"level": level, "threads": bench.N,
                                                        "group": "%d/%s" % (level, mode)})
        for level in bench.a.levels for mode in bench.a.level_modes], bench.a.runs)


def report(data):
    return compress.by_groups(data, "levels", ["level", "mode"])
