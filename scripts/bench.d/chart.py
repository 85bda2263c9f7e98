#!/usr/bin/env python3
"""Throughput chart for scripts/bench: chart.py RESULTS.json OUT_STEM

Always writes OUT_STEM.svg with the standard library; also writes
OUT_STEM.png when matplotlib imports.  Prints the paths it wrote.
Panels: compression (level 3) per I/O mode, decompression per input,
thread scaling, and levels 1/19 -- MB/s per tool.
"""

import json
import math
import sys
from xml.sax.saxutils import escape

MODE_TITLE = {"file": "file→file", "null": "file→/dev/null", "stdio": "stdin→stdout", "pipe": "pipe→stdout",
              "pipenull": "pipe→/dev/null",
              "overwrite": "file→existing file (-f)", "disk": "file→file, then sync"}
COLORS = {"weir": "#e8590c", "zstd": "#1c7ed6", "pzstd": "#2f9e44", "zstd-T1": "#868e96"}


def mbps(c):
    return (c.get("median") or {}).get("mbps")


def ordered(items):
    out = []
    for x in items:
        if x not in out:
            out.append(x)
    return out


def panels(data):
    """[(title, group labels, [(series label, family, [value per group])], reference line or None)]"""
    secs = data.get("sections", {})
    n = data["meta"]["threads"]
    res = []

    def grouped(title, cs, group_of, group_label, series_of, ref=None):
        groups = ordered(group_of(c) for c in cs)
        series = ordered((series_of(c), c["family"]) for c in cs)
        rows = []
        for label, fam in series:
            vals = []
            for g in groups:
                c = next((c for c in cs if group_of(c) == g and series_of(c) == label), None)
                vals.append(mbps(c) if c else None)
            rows.append((label, fam, vals))
        if groups and rows:
            res.append((title, [group_label(g) for g in groups], rows, ref))

    single = secs.get("ceiling", {}).get("single_comp_mbps")
    ceiling = (n * single, "ceiling: %d × zstd -b3 -T1" % n) if single else None
    if "compress" in secs:
        grouped("Compression, level 3, %d threads (MB/s)" % n, secs["compress"]["cases"],
                lambda c: c["mode"], lambda g: MODE_TITLE.get(g, g), lambda c: c["tool"], ceiling)
    if "decompress" in secs:
        cs = secs["decompress"]["cases"]
        mode = "file" if any(c["mode"] == "file" for c in cs) else cs[0]["mode"]
        grouped("Decompression, %s (MB/s of output)" % MODE_TITLE.get(mode, mode),
                [c for c in cs if c["mode"] == mode], lambda c: c["source_label"], lambda g: "of " + g,
                lambda c: c["tool"])
    if "scaling" in secs:
        grouped("Thread scaling, level 3 → /dev/null (MB/s)", secs["scaling"]["cases"],
                lambda c: c["threads"], lambda g: "%d thread%s" % (g, "" if g == 1 else "s"),
                lambda c: c["family"], (single, "one core, in memory (zstd -b3)") if single else None)
    if "levels" in secs:
        cs = secs["levels"]["cases"]
        mode = "file" if any(c["mode"] == "file" for c in cs) else cs[0]["mode"]
        for level in ordered(c["level"] for c in cs):
            grouped("Compression, level %s, slice, %s (MB/s)" % (level, MODE_TITLE.get(mode, mode)),
                    [c for c in cs if c["mode"] == mode and c["level"] == level], lambda c: c["mode"],
                    lambda g: "level %s" % level, lambda c: c["tool"])
    return res


def fmt(v):
    return "%.0f" % v if v >= 100 else "%.1f" % v


def svg(data, ps):
    W, PH, top = 980, 300, 50
    H = top + len(ps) * PH + 20
    left, right = 70, 190
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
           'font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="12">' % (W, H, W, H),
           '<rect width="100%" height="100%" fill="white"/>']
    m = data["meta"]
    out.append('<text x="%d" y="24" font-size="16" font-weight="bold">%s</text>' % (
        left, escape("weir benchmark %s%s — %s, %d cores" % (
            m["date"], " (quick)" if m.get("quick") else "", m["cpu_model"], m["nproc"]))))
    for i, (title, groups, series, ref) in enumerate(ps):
        y0 = top + i * PH
        ph = PH - 80
        base = y0 + 30 + ph
        vals = [v for _, _, vs in series for v in vs if v] + ([ref[0]] if ref else [])
        vmax = max(vals) if vals else 1
        step = nice_step(vmax / 5)
        top_v = step * (int(vmax / step) + 1)
        out.append('<text x="%d" y="%d" font-size="14" font-weight="bold">%s</text>' % (left, y0 + 18, escape(title)))
        k = 0
        while k * step <= top_v + 1e-9:
            y = base - ph * (k * step) / top_v
            out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>' % (left, W - right, y, y))
            out.append('<text x="%d" y="%.1f" text-anchor="end" fill="#555">%s</text>' % (left - 6, y + 4, "%g" % round(k * step, 6)))
            k += 1
        gw = (W - right - left) / max(1, len(groups))
        bw = min(40, (gw - 20) / max(1, len(series)))
        for gi, g in enumerate(groups):
            gx = left + gi * gw + (gw - bw * len(series)) / 2
            for si, (label, fam, vs) in enumerate(series):
                v = vs[gi]
                if not v:
                    continue
                h = ph * v / top_v
                x = gx + si * bw
                out.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s</title></rect>' % (
                    x + 1, base - h, bw - 2, h, COLORS.get(fam, "#888"), escape("%s, %s: %s MB/s" % (label, g, fmt(v)))))
                out.append('<text x="%.1f" y="%.1f" text-anchor="middle" font-size="10">%s</text>' % (
                    x + bw / 2, base - h - 3, fmt(v)))
            out.append('<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>' % (
                left + gi * gw + gw / 2, base + 16, escape(str(g))))
        out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#333"/>' % (left, W - right, base, base))
        if ref:
            y = base - ph * ref[0] / top_v
            out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#c92a2a" stroke-dasharray="6 4"/>' % (
                left, W - right, y, y))
            out.append('<text x="%d" y="%.1f" fill="#c92a2a" font-size="10" text-anchor="end">%s</text>' % (
                W - right - 4, y - 4, escape("%s: %s" % (ref[1], fmt(ref[0])))))
        for si, (label, fam, _) in enumerate(series):
            ly = y0 + 40 + si * 18
            out.append('<rect x="%d" y="%d" width="12" height="12" fill="%s"/>' % (W - right + 14, ly - 10,
                                                                                 COLORS.get(fam, "#888")))
            out.append('<text x="%d" y="%d">%s</text>' % (W - right + 32, ly, escape(label)))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def nice_step(x):
    """Smallest of 1, 2, 2.5, 5 x 10^k that is >= x."""
    if x <= 0:
        return 1
    p = 10 ** math.floor(math.log10(x))
    for mult in (1, 2, 2.5, 5, 10):
        if p * mult >= x:
            return p * mult
    return p * 10


def png(data, ps, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception:
        return False
    fig, axes = plt.subplots(len(ps), 1, figsize=(10, 3.2 * len(ps)), squeeze=False)
    for ax, (title, groups, series, ref) in zip(axes[:, 0], ps):
        width = 0.8 / max(1, len(series))
        for si, (label, fam, vs) in enumerate(series):
            xs = [gi - 0.4 + width * (si + 0.5) for gi in range(len(groups))]
            bars = ax.bar(xs, [v or 0 for v in vs], width * 0.95, label=label, color=COLORS.get(fam, "#888"))
            for b, v in zip(bars, vs):
                if v:
                    ax.annotate(fmt(v), (b.get_x() + b.get_width() / 2, b.get_height()), ha="center",
                                va="bottom", fontsize=7)
        if ref:
            ax.axhline(ref[0], color="#c92a2a", linestyle="--", linewidth=1,
                       label="%s: %s" % (ref[1], fmt(ref[0])))
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels([str(g) for g in groups])
        ax.set_title(title, loc="left", fontsize=11)
        ax.set_ylabel("MB/s")
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.0, 0.5))
    m = data["meta"]
    fig.suptitle("weir benchmark %s%s — %s, %d cores" % (m["date"], " (quick)" if m.get("quick") else "",
                                                        m["cpu_model"], m["nproc"]))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: chart.py RESULTS.json OUT_STEM")
    data = json.load(open(sys.argv[1]))
    stem = sys.argv[2]
    ps = panels(data)
    if not ps:
        return
    with open(stem + ".svg", "w") as f:
        f.write(svg(data, ps))
    print(stem + ".svg")
    if png(data, ps, stem + ".png"):
        print(stem + ".png")


if __name__ == "__main__":
    main()
