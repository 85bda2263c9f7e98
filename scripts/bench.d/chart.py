#!/usr/bin/env python3
"""chart.py RESULTS.json OUT_STEM: scripts/bench's throughput chart, OUT_STEM.svg and .png (paths printed), drawn
by matplotlib (Debian's python3-matplotlib). MB/s per tool: compression per mode, decompression, scaling, levels."""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))  # weirtools

from formatting import MODE_TITLE, f_mbps, med

COLORS = {"weir": "#e8590c", "zstd": "#1c7ed6", "pzstd": "#2f9e44", "zstd-T1": "#868e96"}


def panels(data):
    """[(title, group labels, [(series label, family, [MB/s per group])], (reference MB/s, label) or None)]"""
    secs, n, res = data.get("sections", {}), data["meta"]["threads"], []

    def panel(title, cs, group, series, ref=None):  # group, series: a case's label in each
        groups, names = list(dict.fromkeys(map(group, cs))), list(dict.fromkeys((series(c), c["family"]) for c in cs))
        if cs:
            res.append((title, groups, [(name, fam, [next((med(c, "mbps") for c in cs if group(c) == g and series(c)
                                                           == name), None) for g in groups]) for name, fam in names],
                        ref if ref and ref[0] else None))

    def in_mode(section):  # the section's file→file cases, or its first mode's
        cs = [c for c in secs[section]["cases"] if c["family"] != "limit"]
        mode = "file" if any(c["mode"] == "file" for c in cs) else cs[0]["mode"]
        return MODE_TITLE.get(mode, mode), [c for c in cs if c["mode"] == mode], mode == "file"

    single = secs.get("ceiling", {}).get("single_comp_mbps")
    if "compress" in secs:
        panel("Compression, level 3, %d threads (MB/s)" % n, secs["compress"]["cases"],
              lambda c: MODE_TITLE.get(c["mode"], c["mode"]), lambda c: c["tool"],
              (n * (single or 0), "ceiling: %d × zstd -b3 -T1" % n))
    if "decompress" in secs:
        mode, cs, to_file = in_mode("decompress")
        lim = next((med(c, "mbps") for c in secs["decompress"]["cases"] if c["family"] == "limit"), None)
        panel("Decompression, %s (MB/s of output)" % mode, cs, lambda c: "of " + c["source_label"],
              lambda c: c["tool"], (lim if to_file else None, "write limit (dd, until on disk)"))
    if "scaling" in secs:
        panel("Thread scaling, level 3 → /dev/null (MB/s)", secs["scaling"]["cases"],
              lambda c: "%d thread%s" % (c["threads"], "" if c["threads"] == 1 else "s"), lambda c: c["family"],
              (single, "one core, in memory (zstd -b3)"))
    if "levels" in secs:
        mode, cs, _ = in_mode("levels")
        for level in dict.fromkeys(c["level"] for c in cs):
            panel("Compression, level %s, slice, %s (MB/s)" % (level, mode), [c for c in cs if c["level"] == level],
                  lambda c: "level %s" % c["level"], lambda c: c["tool"])
    return res


def draw(data, ps, stem):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(len(ps), 1, figsize=(10, 3.2 * len(ps)), squeeze=False)
    for ax, (title, groups, series, ref) in zip(axes[:, 0], ps, strict=True):
        width = 0.8 / len(series)
        for si, (label, fam, vs) in enumerate(series):
            ax.bar_label(ax.bar([gi - 0.4 + width * (si + 0.5) for gi in range(len(groups))], [v or 0 for v in vs],
                                width * 0.95, label=label, color=COLORS.get(fam, "#888")),
                         [f_mbps(v) if v else "" for v in vs], fontsize=7)
        if ref:
            ax.axhline(ref[0], color="#c92a2a", linestyle="--", linewidth=1, label="%s: %s" % (ref[1], f_mbps(ref[0])))
        ax.set_xticks(range(len(groups)), groups)
        ax.set_title(title, loc="left", fontsize=11)
        ax.set_ylabel("MB/s")
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.0, 0.5))
    m = data["meta"]
    fig.suptitle("weir benchmark %s%s — %s, %d cores" % (m["date"], " (quick)" * bool(m.get("quick")), m["cpu_model"],
                                                        m["nproc"]))
    fig.tight_layout()
    os.makedirs(os.path.dirname(stem) or ".", exist_ok=True)  # bench/work/charts/ when drawn again by hand
    for ext in (".svg", ".png"):
        fig.savefig(stem + ext, dpi=110)
        print(stem + ext)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: chart.py RESULTS.json OUT_STEM")
    results = json.load(open(sys.argv[1]))
    if panels(results):  # nothing to draw for the tree, seek, lean sections alone
        draw(results, panels(results), sys.argv[2])
