"""scripts/bench's compress section: level 3 on the main corpus, weir -TN, zstd -TN, pzstd -pN, zstd -T1, in each
--modes mode. by_groups() also renders the levels section."""

import harness
from corpus import file_size
from formatting import (
    BASIC,
    MODE_TITLE,
    cases,
    cells,
    commands,
    f_ok,
    f_ratio,
    f_tool,
    grouped,
    human,
    med,
    of,
    ratio,
    vs,
)
from weirtools.tables import render


def measure(bench):
    harness.grid(bench, "compress", "Compression, level 3, main corpus (%s)" % human(file_size(bench.main)), [
        (mode, bench.main, harness.comp_tools(bench), {"level": 3, "threads": bench.N, "group": mode})
        for mode in bench.a.modes], bench.a.runs)


def variants(groups):  # weir beside its --weir-variant runs of the same case
    rows = [[label, c["tool"]] + [f_ratio(ratio(med(of(gc, "weir"), k), med(c, k))) for k in ("wall", "cpu", "rss_kb")]
            for label, gc in groups.items() for c in gc if of(gc, "weir") and c["family"].startswith("weir:")]
    return ("\nweir ÷ its variants, same run (wall: >1 means weir as shipped takes longer):\n\n" + render(
        ["Case", "Variant", "Wall ÷ variant", "CPU ÷ variant", "RSS ÷ variant"], rows)) if rows else ""


def by_groups(data, section, keys):  # keys: the groups (mode, or level and mode)
    n, cs = data["meta"]["threads"], cases(data, section)
    groups = grouped(cs, lambda c: " ".join(("level %s" % c[k]) if k == "level" else MODE_TITLE.get(c[k], str(c[k]))
                                            for k in keys))
    peer = {"zstd": "zstd -T%d" % n, "pzstd": "pzstd -p%d" % n, "zstd-T1": "zstd -T1"}
    spec = [("Speed", "mbps", "zstd"), ("Speed", "mbps", "pzstd"), ("Speed", "mbps", "zstd-T1"), ("CPU", "cpu", "zstd"),
            ("RSS", "rss_kb", "zstd"), ("RSS", "rss_kb", "pzstd"), ("Size", "out_bytes", "zstd"),
            ("Size", "out_bytes", "pzstd")]
    rows = [[label, f_tool(c)] + cells(c, BASIC + ("Output bytes",)) + [
        f_ratio(vs(c, of(gc, "zstd"), "out_bytes"), 4), f_ok(c)] for label, gc in groups.items() for c in gc]
    peers = [[label] + [f_ratio(vs(of(gc, "weir"), of(gc, f), k), 4 if k == "out_bytes" else 2) for _, k, f in spec]
             for label, gc in groups.items() if of(gc, "weir")]
    return "".join([
        render(["Case", "Tool", "MB/s", "Wall s", "Spread", "CPU s", "Peak RSS MiB", "Output bytes",
               "Size ÷ zstd -T%d" % n, "Runs ok"], rows),
        "\nweir ÷ peers, same run (speed: >1 means weir is faster; CPU, RSS, size: <1 means weir uses less):\n\n",
        render(["Case"] + ["%s ÷ %s" % (what, peer[f]) for what, _, f in spec], peers),
        variants(groups), "\n", commands(cs)])


def report(data):
    return by_groups(data, "compress", ["mode"])
