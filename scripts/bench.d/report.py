#!/usr/bin/env python3
"""Markdown report and target evaluation for scripts/bench.

compute_targets(data) evaluates the issue-5 targets from the raw JSON the
runner writes; render(data, json_name, chart_files) returns the report.
Usable on its own: `report.py RESULTS.json > RESULTS.md`.  Standard library only.
"""

import json
import os
import sys

MODE_TITLE = {
    "file": "file→file",
    "null": "file→/dev/null",
    "stdio": "stdin→stdout",
    "pipe": "pipe→stdout",
    "pipenull": "pipe→/dev/null",
    "overwrite": "file→existing file (-f)",
    "disk": "file→file, then sync",
}


# ---------------------------------------------------------------- lookups

def cases(data, section):
    return data.get("sections", {}).get(section, {}).get("cases", [])


def find(data, section, **kw):
    for c in cases(data, section):
        if all(c.get(k) == v for k, v in kw.items()):
            return c
    return None


def med(c, key):
    if not c or not c.get("median"):
        return None
    return c["median"].get(key)


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


# ---------------------------------------------------------------- targets

def compute_targets(data):
    n = data["meta"]["threads"]
    out = []

    def add(target, value, op, threshold, basis, weir=(), unit=None, section=None):
        broken = [c for c in weir if c and c.get("ok_runs", 0) < c.get("n_runs", 0)]
        if broken:
            # a fast but wrong (or crashing) weir must not pass
            status = "missed"
            basis += " — **weir failed or gave wrong output in %d run(s)**" % sum(
                c["n_runs"] - c["ok_runs"] for c in broken)
        elif value is None:
            status = "not measured"
        elif op == ">=":
            status = "met" if value >= threshold else "missed"
        elif op == "<=":
            status = "met" if value <= threshold else "missed"
        else:  # within: |value - 1| <= threshold
            status = "met" if abs(value - 1) <= threshold else "missed"
        t = {"target": target, "value": value, "op": op, "threshold": threshold,
             "status": status, "basis": basis}
        if unit:
            t["unit"] = unit
        if section:
            t["section"] = section
        out.append(t)

    cw = find(data, "compress", family="weir", mode="file")
    cz = find(data, "compress", family="zstd", mode="file")
    cp = find(data, "compress", family="pzstd", mode="file")
    add("Compression throughput ≥ 1.10× zstd -T%d" % n, ratio(med(cw, "mbps"), med(cz, "mbps")), ">=", 1.10,
        "level 3, main corpus, file→file, MB/s of weir -T%d ÷ zstd -T%d" % (n, n), [cw])
    add("Compression throughput ≥ 1.0× pzstd -p%d" % n, ratio(med(cw, "mbps"), med(cp, "mbps")), ">=", 1.0,
        "level 3, main corpus, file→file, MB/s of weir -T%d ÷ pzstd -p%d" % (n, n), [cw])

    ceil = data.get("sections", {}).get("ceiling", {})
    single = ceil.get("single_comp_mbps")
    paired = find(data, "ceiling", family="weir")
    wn = paired or find(data, "compress", family="weir", mode="null") or find(data, "scaling", family="weir", threads=n)
    add("Compression ≥ 0.9× the %d-core in-memory ceiling" % n,
        ratio(med(wn, "mbps"), n * single if single else None), ">=", 0.9,
        "weir -T%d file→/dev/null MB/s%s ÷ (%d × zstd -b3 -T1 = %s MB/s)" % (
            n, " (%s MB/s, in the ceiling's rounds)" % f_mbps(med(wn, "mbps")) if paired else "", n,
            "%.0f" % (n * single) if single else "?") + together_note(ceil, n, med(wn, "mbps")), [wn])
    add("Output size ≤ 1.005× zstd -T%d's" % n, ratio(med(cw, "out_bytes"), med(cz, "out_bytes")), "<=", 1.005,
        "level 3, main corpus, bytes of weir output ÷ zstd -T%d output" % n, [cw])
    add("Peak RSS ≤ zstd -T%d's" % n, ratio(med(cw, "rss_kb"), med(cz, "rss_kb")), "<=", 1.0,
        "level 3, main corpus, file→file, peak RSS of weir ÷ zstd -T%d" % n, [cw])

    mem_all = [c for c in cases(data, "memory") if c["family"] == "weir"]
    mem = sorted([c for c in mem_all if c.get("median")], key=lambda c: c["stream_bytes"])
    if len(mem) >= 2 and mem[-1]["stream_bytes"] > mem[0]["stream_bytes"]:
        add("Peak RSS flat within 5%% (%s vs %s stream)" % (human(mem[0]["stream_bytes"]),
                                                            human(mem[-1]["stream_bytes"])),
            ratio(med(mem[-1], "rss_kb"), med(mem[0], "rss_kb")), "within", 0.05,
            "weir peak RSS on the %s stream ÷ on the %s stream (through a pipe)" % (
                human(mem[-1]["stream_bytes"]), human(mem[0]["stream_bytes"])), mem_all)
    else:
        add("Peak RSS flat within 5% (1 GB vs 10 GB stream)", None, "within", 0.05,
            "needs two stream sizes: run with --memory-scaling", mem_all)

    for src, target, thr in (("weir", "Decompression of weir's output ≥ 1.4× zstd -d", 1.4),
                             ("zstd", "Decompression of a single-frame file ≥ 1.0× zstd -d", 1.0)):
        dw = find(data, "decompress", source=src, family="weir", mode="file")
        dz = find(data, "decompress", source=src, family="zstd", mode="file")
        label = {"weir": "weir -T%d output" % n, "zstd": "zstd -T%d output (one frame)" % n}[src]
        add(target, ratio(med(dw, "mbps"), med(dz, "mbps")), ">=", thr,
            "%s, file→file, MB/s of weir -d -T%d ÷ zstd -d on the same file" % (label, n), [dw])

    cs = find(data, "compress", family="weir", mode="stdio")
    add("stdin→stdout within 5% of file→file", ratio(med(cs, "mbps"), med(cw, "mbps")), ">=", 0.95,
        "level 3, main corpus, MB/s of `weir < in > out` ÷ `weir in -o out` (slower by at most 5%: ≥ 0.95×)",
        [cs, cw])

    s1 = find(data, "scaling", family="weir", threads=1)
    tn = 2 if find(data, "scaling", family="weir", threads=2) else n
    s2 = find(data, "scaling", family="weir", threads=tn)
    if tn == 1:
        add("Scaling: -T2 ≥ 1.85× -T1", None, ">=", 1.85,
            "needs weir -T1 and -T2 in the scaling section (--threads 2 or --scaling-threads 1,2)")
    else:
        add("Scaling: -T%d ≥ 1.85× -T1" % tn, ratio(med(s2, "mbps"), med(s1, "mbps")), ">=", 1.85,
            "level 3, main corpus → /dev/null, MB/s of weir -T%d ÷ weir -T1" % tn
            + machine_scaling_note(ceil, tn), [s1, s2])

    sw = find(data, "small", family="weir")
    sz = find(data, "small", family="zstd")
    small = data.get("corpus", {}).get("small", {}).get("bytes")
    add("Small file: ≤ 1.2× zstd's wall time", ratio(med(sw, "wall"), med(sz, "wall")), "<=", 1.2,
        "%s file, level 3, file→file, wall of weir -T%d ÷ zstd -T%d (start-up included)" % (
            human(small) if small else "small", n, n), [sw])

    tw = find(data, "tree", family="weir")
    tz = find(data, "tree", family="zstd")
    if tw or tz:
        tree = data["sections"]["tree"]
        add("Tree (-r): ≥ 1.5× zstd -r's speed (issue 16)", ratio(med(tz, "wall"), med(tw, "wall")), ">=", 1.5,
            "%s files of %s, level 3, wall of zstd -T%d -r ÷ weir -T%d -r%s" % (
                tree.get("files"), tree.get("archive"), n, n,
                ", a fresh ext4 per run" if tree.get("fresh_fs") else ""), [tw])

    seek = data.get("sections", {}).get("seek")
    if seek:
        at = "%s at byte %s" % (f_len(seek.get("length")), "{:,}".format(seek.get("offset", 0)))
        for key, target, limit, basis in (
                ("range-weir", "Random access: a range from weir's file ≤ 20 ms", 20,
                 "`weir -d --range` of %s from weir's own file (seek table)" % at),
                ("range-pzstd", "Random access: a range from pzstd's file ≤ 100 ms", 100,
                 "`weir -d --range` of %s from pzstd's file (no seek table: frames measured by decoding)" % at),
                ("index-pzstd", "Random access: `--index` pzstd's file ≤ 200 ms", 200,
                 "`weir --index` on a fresh copy of pzstd's file (%s compressed)" % human(
                     next((x["bytes"] for x in seek.get("inputs", []) if x["name"] == "pzstd.zst"), None))),
                ("list-cat8", "Random access: `-l` of 8 concatenated weir files ≤ 20 ms", 20,
                 "`weir -l` on 8 weir files concatenated (each part's seek table, chained)")):
            c = find(data, "seek", key=key)
            wall = med(c, "wall")
            add(target, None if wall is None else wall * 1000, "<=", limit,
                basis + ", median wall ms, process start-up included", [c], unit="ms")
    if "lean" in data.get("sections", {}):
        lean_targets(data, add)
    return out


def lean_targets(data, add):
    """Issue 31's targets (lean at every level), listed in the lean section."""
    n = data["meta"]["threads"]
    s = data["sections"]["lean"]

    def lean(target, value, op, threshold, basis, weir=()):
        add(target, value, op, threshold, basis, weir, section="lean")

    lc, ld = s.get("limit_comp_mbps"), s.get("limit_dec_mbps")
    sl = human(s.get("slice_bytes"))
    limit = "%d × zstd -b3 -T1 on the slice at once" % n
    wf = find(data, "lean", row="file", family="weir")
    wp = find(data, "lean", row="pipe", family="weir")
    wd = find(data, "lean", row="dec", family="weir")
    lean("Compression from a file ≥ 0.95× the limit", ratio(med(wf, "mbps"), lc), ">=", 0.95,
         "level 3, %s slice, file→/dev/null, MB/s of weir -T%d (%s) ÷ the limit (%s: %s MB/s)" % (
             sl, n, f_mbps(med(wf, "mbps")), limit, f_mbps(lc)), [wf])
    lean("Compression through a pipe ≥ 0.90× the limit", ratio(med(wp, "mbps"), lc), ">=", 0.90,
         "level 3, `cat SLICE | weir -T%d -c > /dev/null`, MB/s (%s) ÷ the limit (%s MB/s)" % (
             n, f_mbps(med(wp, "mbps")), f_mbps(lc)), [wp])
    lean("Decompression ≥ 0.95× its limit", ratio(med(wd, "mbps"), ld), ">=", 0.95,
         "weir -d -T%d of weir's file of the slice → /dev/null, MB/s (%s) ÷ the limit (%s, decompression: "
         "%s MB/s)" % (n, f_mbps(med(wd, "mbps")), limit, f_mbps(ld)), [wd])
    rss = human(s.get("rss_slice_bytes"))
    mode = MODE_TITLE.get(s.get("rss_mode"), s.get("rss_mode"))
    for label in s.get("levels", []):
        w = find(data, "lean", row="level", level_label=label, family="weir")
        z = find(data, "lean", row="level", level_label=label, family="zstd")
        lean("Peak RSS at %s ≤ zstd -T%d's" % (label, n), ratio(med(w, "rss_kb"), med(z, "rss_kb")), "<=", 1.0,
             "%s slice, %s, peak RSS of weir (%s MiB) ÷ zstd -T%d (%s MiB)" % (
                 rss, mode, f_mib(med(w, "rss_kb")), n, f_mib(med(z, "rss_kb"))), [w])
        lean("Speed at %s ≥ zstd -T%d's" % (label, n), ratio(med(w, "mbps"), med(z, "mbps")), ">=", 1.0,
             "%s slice, %s, MB/s of weir (%s) ÷ zstd -T%d (%s)" % (
                 rss, mode, f_mbps(med(w, "mbps")), n, f_mbps(med(z, "mbps"))), [w])
    w = find(data, "lean", row="small", family="weir")
    z = find(data, "lean", row="small", family="zstd")
    lean("Peak RSS on the %s file ≤ zstd -T%d's" % (human(s.get("small_bytes")), n),
         ratio(med(w, "rss_kb"), med(z, "rss_kb")), "<=", 1.0,
         "level 3, %s, peak RSS of weir (%s MiB) ÷ zstd -T%d (%s MiB)" % (
             mode, f_mib(med(w, "rss_kb")), n, f_mib(med(z, "rss_kb"))), [w])
    tw, tz = find(data, "tree", family="weir"), find(data, "tree", family="zstd")
    tree = data.get("sections", {}).get("tree")
    basis = ("the tree section: %s files of %s, wall, user+sys CPU and peak RSS of weir -T%d -r and zstd -T%d -r" % (
        tree.get("files"), tree.get("archive"), n, n) if tree else
        "from the tree section, which did not run: `--sections lean,tree`")
    lean("-r: CPU ≤ 1.3× zstd -r's", ratio(med(tw, "cpu"), med(tz, "cpu")), "<=", 1.3,
         basis + ": CPU of weir ÷ zstd", [tw])
    lean("-r: speed ≥ 1.2× zstd -r's", ratio(med(tz, "wall"), med(tw, "wall")), ">=", 1.2,
         basis + ": wall of zstd ÷ weir", [tw])
    lean("-r: peak RSS ≤ 1.2× zstd -r's", ratio(med(tw, "rss_kb"), med(tz, "rss_kb")), "<=", 1.2,
         basis + ": peak RSS of weir ÷ zstd", [tw])


# ---------------------------------------------------------------- formatting

def human(n):
    if n is None:
        return "–"
    for unit, div in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= div:
            return "%.3g %s" % (n / div, unit)
    return "%d B" % n


def f_mbps(v):
    if v is None:
        return "–"
    return "%.0f" % v if v >= 100 else "%.1f" % v


def f_num(v, fmt="%.2f"):
    return "–" if v is None else fmt % v


def f_ratio(v, digits=2):
    return "–" if v is None else ("%." + str(digits) + "f×") % v


def f_bytes(v):
    return "–" if v is None else "{:,}".format(int(v))


def f_len(n):
    if n is None:
        return "–"
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return "%d MiB" % (n >> 20)
    return "%s bytes" % f_bytes(n)


def f_mib(kb):
    return "–" if kb is None else "%.1f" % (kb / 1024)


def f_spread(c):
    m = c.get("median")
    if not m or not m.get("wall"):
        return "–"
    return "%.1f%%" % (100 * (m["wall_max"] - m["wall_min"]) / m["wall"])


def f_ok(c):
    s = "%d/%d" % (c.get("ok_runs", 0), c.get("n_runs", 0))
    if c.get("ok_runs", 0) < c.get("n_runs", 0):
        s += " **FAILED**"
    vo = c.get("verify_once")
    if vo and not vo.get("ok"):
        s += " **WRONG OUTPUT**"
    return s


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---" if i < 2 else "--:" for i in range(len(header))) + "|"]
    for r in rows:
        lines.append("| " + " | ".join(str(x) for x in r) + " |")
    return "\n".join(lines) + "\n"


def commands(cs, extra=()):
    seen, lines = set(), list(extra)
    for c in cs:
        if c["cmd"] not in seen:
            seen.add(c["cmd"])
            lines.append(c["cmd"])
    return "<details><summary>Commands</summary>\n\n```sh\n" + "\n".join(lines) + "\n```\n</details>\n"


def peers_of(cs, family):
    return [c for c in cs if c["family"] != family]


# ---------------------------------------------------------------- sections

def compression_tables(data, section, group_keys):
    """One table per group (mode, or level+mode), then weir-vs-peers."""
    n = data["meta"]["threads"]
    cs = cases(data, section)
    out = []
    groups = []
    for c in cs:
        g = tuple(c.get(k) for k in group_keys)
        if g not in groups:
            groups.append(g)
    rows, vs = [], []
    for g in groups:
        gc = [c for c in cs if tuple(c.get(k) for k in group_keys) == g]
        z = next((c for c in gc if c["family"] == "zstd"), None)
        label = " ".join(("level %s" % v) if k == "level" else MODE_TITLE.get(v, str(v))
                         for k, v in zip(group_keys, g))
        for c in gc:
            rows.append([label, ("**%s**" % c["tool"]) if c["family"] == "weir" else c["tool"],
                         f_mbps(med(c, "mbps")), f_num(med(c, "wall")), f_spread(c), f_num(med(c, "cpu")),
                         f_mib(med(c, "rss_kb")), f_bytes(med(c, "out_bytes")),
                         f_ratio(ratio(med(c, "out_bytes"), med(z, "out_bytes")), 4), f_ok(c)])
        w = next((c for c in gc if c["family"] == "weir"), None)
        p = next((c for c in gc if c["family"] == "pzstd"), None)
        z1 = next((c for c in gc if c["family"] == "zstd-T1"), None)
        if w:
            vs.append([label, f_ratio(ratio(med(w, "mbps"), med(z, "mbps"))),
                       f_ratio(ratio(med(w, "mbps"), med(p, "mbps"))),
                       f_ratio(ratio(med(w, "mbps"), med(z1, "mbps"))),
                       f_ratio(ratio(med(w, "cpu"), med(z, "cpu"))),
                       f_ratio(ratio(med(w, "rss_kb"), med(z, "rss_kb"))),
                       f_ratio(ratio(med(w, "rss_kb"), med(p, "rss_kb"))),
                       f_ratio(ratio(med(w, "out_bytes"), med(z, "out_bytes")), 4),
                       f_ratio(ratio(med(w, "out_bytes"), med(p, "out_bytes")), 4)])
    out.append(table(["Case", "Tool", "MB/s", "Wall s", "Spread", "CPU s", "Peak RSS MiB", "Output bytes",
                      "Size ÷ zstd -T%d" % n, "Runs ok"], rows))
    out.append("\nweir ÷ peers, same run (speed: >1 means weir is faster; CPU, RSS, size: <1 means weir "
               "uses less):\n\n")
    out.append(table(["Case", "Speed ÷ zstd -T%d" % n, "Speed ÷ pzstd -p%d" % n, "Speed ÷ zstd -T1",
                      "CPU ÷ zstd -T%d" % n, "RSS ÷ zstd -T%d" % n, "RSS ÷ pzstd -p%d" % n,
                      "Size ÷ zstd -T%d" % n, "Size ÷ pzstd -p%d" % n], vs))
    out.append(variants_table(cs, groups, group_keys))
    out.append("\n" + commands(cs))
    return "".join(out)


def variants_table(cs, groups, group_keys):
    """weir beside its --weir-variant runs of the same case, same run."""
    rows = []
    for g in groups:
        gc = [c for c in cs if tuple(c.get(k) for k in group_keys) == g]
        w = next((c for c in gc if c["family"] == "weir"), None)
        label = " ".join(("level %s" % v) if k == "level" else MODE_TITLE.get(v, str(v))
                         for k, v in zip(group_keys, g))
        for c in gc:
            if w and c["family"].startswith("weir:"):
                rows.append([label, c["tool"], f_ratio(ratio(med(w, "wall"), med(c, "wall"))),
                             f_ratio(ratio(med(w, "cpu"), med(c, "cpu"))),
                             f_ratio(ratio(med(w, "rss_kb"), med(c, "rss_kb")))])
    if not rows:
        return ""
    return ("\nweir ÷ its variants, same run (wall: >1 means weir as shipped takes longer):\n\n" +
            table(["Case", "Variant", "Wall ÷ variant", "CPU ÷ variant", "RSS ÷ variant"], rows))


def together_note(ceil, n, mbps):
    """The ceiling target's context: what n one-core runs made at the same time."""
    both = ceil.get("together_comp_mbps")
    if not both or n < 2:
        return ""
    text = "; for comparison, %d × zstd -b3 -T1 run at the same time made %s MB/s together" % (n, f_mbps(both))
    return text + (", and weir %s× that" % f_num(ratio(mbps, both)) if mbps else "")


def machine_scaling_note(ceil, n):
    """The scaling target's context: how much the machine itself gives a second process."""
    single, both = ceil.get("single_comp_mbps"), ceil.get("together_comp_mbps")
    if not single or not both or n != ceil.get("threads"):
        return ""
    return "; the machine itself: %d × zstd -b3 -T1 at the same time made %s× one alone" % (
        n, f_num(ratio(both, single)))


def sec_ceiling(data):
    s = data["sections"]["ceiling"]
    n = s["threads"]
    single, dsingle = s.get("single_comp_mbps"), s.get("single_dec_mbps")
    ceil = n * single if single else None
    dceil = n * dsingle if dsingle else None
    rows = [["libzstd, one core, compress (zstd -b3 -T1)", f_mbps(single), ""],
            ["libzstd, one core, decompress", f_mbps(dsingle), ""],
            ["**Compression ceiling, %d cores**" % n, f_mbps(ceil), "1.00"]]
    if s.get("together_comp_mbps"):
        rows.append(["%d × zstd -b3 -T1 at the same time, together" % n, f_mbps(s["together_comp_mbps"]),
                     f_num(ratio(s["together_comp_mbps"], ceil))])
    c = find(data, "ceiling", family="weir")
    if c:
        rows.append(["%s, %s, in the same rounds" % (c["tool"], MODE_TITLE["null"]), f_mbps(med(c, "mbps")),
                     f_num(ratio(med(c, "mbps"), ceil))])
    for sec, fam, mode in (("compress", "weir", "null"), ("compress", "weir", "file"),
                           ("compress", "zstd", "null"), ("compress", "pzstd", "null")):
        c = find(data, sec, family=fam, mode=mode)
        if c:
            rows.append(["%s, %s" % (c["tool"], MODE_TITLE[mode]), f_mbps(med(c, "mbps")),
                         f_num(ratio(med(c, "mbps"), ceil))])
    rows.append(["Decompression ceiling, %d cores (weir's own frames)" % n, f_mbps(dceil), "1.00"])
    if s.get("together_dec_mbps"):
        rows.append(["%d × zstd -b3 -T1 at the same time, together, decompress" % n,
                     f_mbps(s["together_dec_mbps"]), f_num(ratio(s["together_dec_mbps"], dceil))])
    for src in ("weir", "zstd"):
        c = find(data, "decompress", source=src, family="weir", mode="null")
        if c:
            rows.append(["%s on %s, file→/dev/null" % (c["tool"], c["source_label"]), f_mbps(med(c, "mbps")),
                         f_num(ratio(med(c, "mbps"), dceil))])
    runs = ", ".join("%s/%s" % (f_mbps(r.get("comp_mbps")), f_mbps(r.get("dec_mbps"))) if r.get("ok")
                     else "failed" for r in s["runs"])
    return (table(["", "MB/s", "Fraction of ceiling"], rows) +
            "\nSingle-core figures are the median over %d run(s) of `%s` (compress/decompress MB/s per run: %s)."
            " zstd -b times compression in memory, with no I/O; it compresses the whole input as one stream, "
            "while weir and pzstd cut it into independent frames.%s\n" % (len(s["runs"]), s["cmd"], runs,
                                                                         together_text(s)))


def together_text(s):
    """How the at-the-same-time row was measured."""
    runs = s.get("together_runs") or []
    if not runs:
        return ""
    sums = ", ".join("%s/%s" % (f_mbps(r.get("comp_mbps")), f_mbps(r.get("dec_mbps"))) if r.get("ok")
                     else "failed" for r in runs)
    return (" The at-the-same-time rows start %d copies of that command together and add up their figures "
            "(median over %d round(s): %s): what %d processes get from this machine's cores at once, which on a "
            "VM whose cores share a physical core or its caches is less than %d × one alone." % (
                s["threads"], len(runs), sums, s["threads"], s["threads"]))


def sec_decompress(data):
    n = data["meta"]["threads"]
    s = data["sections"]["decompress"]
    cs = s["cases"]
    out = [table(["Input", "Bytes", "Frames (zstd -l)", "Made with"],
                 [[x["label"], f_bytes(x["bytes"]), x.get("frames") or "–", "`%s`" % x["cmd"]]
                  for x in s.get("sources", [])]), "\n"]
    rows, vs = [], []
    groups = []
    for c in cs:
        g = (c["source"], c["mode"])
        if g not in groups:
            groups.append(g)
    for g in groups:
        gc = [c for c in cs if (c["source"], c["mode"]) == g]
        label = "%s, %s" % (gc[0]["source_label"], MODE_TITLE[g[1]])
        for c in gc:
            rows.append([label, ("**%s**" % c["tool"]) if c["family"] == "weir" else c["tool"],
                         f_mbps(med(c, "mbps")), f_num(med(c, "wall")), f_spread(c), f_num(med(c, "cpu")),
                         f_mib(med(c, "rss_kb")), f_ok(c)])
        w = next((c for c in gc if c["family"] == "weir"), None)
        z = next((c for c in gc if c["family"] == "zstd"), None)
        p = next((c for c in gc if c["family"] == "pzstd"), None)
        vs.append([label, f_ratio(ratio(med(w, "mbps"), med(z, "mbps"))),
                   f_ratio(ratio(med(w, "mbps"), med(p, "mbps"))),
                   f_ratio(ratio(med(w, "cpu"), med(z, "cpu"))),
                   f_ratio(ratio(med(w, "rss_kb"), med(z, "rss_kb")))])
    out.append(table(["Input, mode", "Decoder", "MB/s", "Wall s", "Spread", "CPU s", "Peak RSS MiB", "Runs ok"],
                     rows))
    out.append("\nweir -d ÷ peers on the same input (speed: >1 means weir is faster):\n\n")
    out.append(table(["Input, mode", "Speed ÷ zstd -d", "Speed ÷ pzstd -d -p%d" % n, "CPU ÷ zstd -d",
                      "RSS ÷ zstd -d"], vs))
    out.append("\nMB/s counts decompressed bytes.\n\n" + commands(cs, ["# inputs"] + [
        x["cmd"] for x in s.get("sources", [])] + ["# timed"]))
    return "".join(out)


def sec_scaling(data):
    cs = cases(data, "scaling")
    rows = []
    fams = []
    for c in cs:
        if c["family"] not in fams:
            fams.append(c["family"])
    for fam in fams:
        fc = sorted([c for c in cs if c["family"] == fam], key=lambda c: c["threads"])
        base = next((c for c in fc if c["threads"] == 1), None)
        for c in fc:
            sp = ratio(med(c, "mbps"), med(base, "mbps"))
            rows.append([("**%s**" % c["tool"]) if fam == "weir" else c["tool"], c["threads"],
                         f_mbps(med(c, "mbps")), f_num(med(c, "wall")), f_spread(c), f_num(med(c, "cpu")),
                         f_mib(med(c, "rss_kb")), f_ratio(sp), f_num(sp / c["threads"] if sp else None),
                         f_ok(c)])
    return (table(["Tool", "Threads", "MB/s", "Wall s", "Spread", "CPU s", "Peak RSS MiB", "Speed-up vs 1 thread",
                   "Efficiency", "Runs ok"], rows) + "\n" + commands(cs))


def sec_small(data):
    n = data["meta"]["threads"]
    cs = cases(data, "small")
    z = find(data, "small", family="zstd")
    rows = []
    for c in cs:
        m = c.get("median") or {}
        ms = lambda v: "–" if v is None else "%.1f" % (v * 1000)  # noqa: E731
        rows.append([("**%s**" % c["tool"]) if c["family"] == "weir" else c["tool"], ms(m.get("wall")),
                     ms(m.get("wall_min")), ms(m.get("wall_max")), ms(m.get("cpu")), f_mib(med(c, "rss_kb")),
                     f_bytes(med(c, "out_bytes")), f_ratio(ratio(med(c, "wall"), med(z, "wall"))), f_ok(c)])
    return (table(["Tool", "Wall ms (median)", "Min", "Max", "CPU ms", "Peak RSS MiB", "Output bytes",
                   "Wall ÷ zstd -T%d" % n, "Runs ok"], rows) +
            "\nWall time includes process start-up; it is measured around `/usr/bin/time`, which adds the same "
            "fork/exec cost (about a millisecond) to every tool.\n\n" + commands(cs))


def sec_tree(data):
    n = data["meta"]["threads"]
    s = data["sections"]["tree"]
    cs = cases(data, "tree")
    z = find(data, "tree", family="zstd")
    rows = []
    for c in cs:
        m = c.get("median") or {}
        rows.append([("**%s**" % c["tool"]) if c["family"] == "weir" else c["tool"], f_num(m.get("wall")),
                     f_num(m.get("wall_min")), f_num(m.get("wall_max")), f_num(m.get("user")), f_num(m.get("sys")),
                     f_mib(med(c, "rss_kb")), f_bytes(med(c, "out_bytes")),
                     f_ratio(ratio(med(z, "wall"), med(c, "wall"))), f_ok(c)])
    where = (("a fresh ext4 file system (a loop device on %s, made for the run)" % (
        "a file on the machine's disk" if s.get("on_disk") else "/dev/shm")) if s.get("fresh_fs")
             else "a fresh folder (not root: no fresh file system; earlier runs' freed inodes may slow this one)")
    w = find(data, "tree", family="weir")
    variants = [[c["tool"], f_ratio(ratio(med(w, "wall"), med(c, "wall")))]
                for c in cs if w and c["family"].startswith("weir:")]
    return (table(["Tool", "Wall s (median)", "Min", "Max", "User s", "Sys s", "Peak RSS MiB", "Output bytes",
                   "Speed ÷ zstd -T%d -r" % n, "Runs ok"], rows) +
            "\nBefore every run, `%s` is extracted into %s and synced (untimed): %s files, %s bytes. Every output is "
            "checked: each input has its `.zst`, `zstd -t` accepts all of them, and 200 spread over the tree "
            "decompress to their input%s.\n\n" % (s.get("archive"), where, s.get("files"), f_bytes(s.get("bytes")),
                                                    "; with `--rm`, every input is gone" if s.get("rm") else "")
            + (("weir ÷ its variants, same run (wall: >1 means weir as shipped takes longer):\n\n" +
                table(["Variant", "Wall ÷ variant"], variants) + "\n") if variants else "")
            + commands(cs))


def sec_seek(data):
    s = data["sections"]["seek"]
    cs = s["cases"]
    pipe = find(data, "seek", key="pipe-zstd")
    all_w = find(data, "seek", key="all-weir")
    all_z = find(data, "seek", key="all-zstd")

    def code(text):  # a command inside a table cell: its pipes escaped
        return "`%s`" % text.replace("|", "\\|").replace("\n", " ")

    def times(v):
        return "–" if v is None else ("%.1f×" % v if v < 10 else "%.0f×" % v)

    def ms(v):
        return "–" if v is None else ("%.1f" % (v * 1000) if v < 10 else "%.0f" % (v * 1000))

    inputs = table(["Input", "Bytes", "Frames (zstd -l)", "Skippable frames", "Made with"],
                   [[x["label"], f_bytes(x["bytes"]), "–" if x.get("frames") is None else x["frames"],
                     "–" if x.get("skippable") is None else x["skippable"],
                     x["made"].replace("|", "\\|") if x.get("made") else code(x["cmd"])] for x in s.get("inputs", [])])
    rows = []
    for c in cs:
        is_range = c.get("verify") == "range"
        wall = med(c, "wall")
        weir_range = is_range and c is not pipe
        vs_pipe = times(ratio(med(pipe, "wall"), wall)) if weir_range else "–"
        vs_all = "%s / %s" % (times(ratio(med(all_w, "wall"), wall)),
                              times(ratio(med(all_z, "wall"), wall))) if weir_range else "–"
        label = c["case_label"].replace("|", "\\|")
        label = ("**%s**" % label) if c["family"] == "weir" else label
        cmd = c["cmd"].split("\n")[-1]
        rows.append([label, code(cmd), ms(wall), f_spread(c), f_mib(med(c, "rss_kb")), vs_pipe, vs_all, f_ok(c)])
    out = ("Range: %s at byte offset %s of the %s corpus.\n\n" % (
        f_len(s.get("length")), "{:,}".format(s.get("offset", 0)), human(s.get("corpus_bytes"))) +
        inputs + "\n" +
        table(["Case", "Command", "Wall ms (median)", "Spread", "Peak RSS MiB",
               "zstd -dc \\| tail \\| head ÷ this", "Decode everything ÷ this (weir -dc / zstd -dc)",
               "Runs ok"], rows) +
        "\nWall time includes process start-up (measured around `/usr/bin/time`). The ratios compare a range "
        "case's median wall with the whole-file ways of getting the same bytes, on weir's file: >1 means the "
        "range is that many times faster.\n")
    for note in s.get("notes", []):
        out += "\n- " + note
    out += "\n\n" + commands(cs, ["# inputs (untimed)"] + [x["cmd"] for x in s.get("inputs", [])] + ["# timed"])
    return out


def sec_memory(data):
    s = data["sections"]["memory"]
    cs = s["cases"]
    rows = []
    for c in cs:
        rows.append([human(c["stream_bytes"]), ("**%s**" % c["tool"]) if c["family"] == "weir" else c["tool"],
                     f_mib(med(c, "rss_kb")), f_mbps(med(c, "mbps")), f_num(med(c, "wall")), f_num(med(c, "cpu")),
                     f_bytes(med(c, "out_bytes")), f_ok(c)])
    flat = []
    for fam in [c["family"] for c in cs if c["stream_bytes"] == cs[0]["stream_bytes"]]:
        fc = sorted([c for c in cs if c["family"] == fam], key=lambda c: c["stream_bytes"])
        if len(fc) >= 2:
            flat.append([fc[0]["tool"], "%s → %s" % (human(fc[0]["stream_bytes"]), human(fc[-1]["stream_bytes"])),
                         f_ratio(ratio(med(fc[-1], "rss_kb"), med(fc[0], "rss_kb")), 3)])
    out = table(["Stream", "Tool", "Peak RSS MiB", "MB/s", "Wall s", "CPU s", "Output bytes", "Runs ok"], rows)
    if flat:
        out += "\nRSS growth with the stream size (1.00× is flat):\n\n" + table(["Tool", "Streams", "RSS ratio"],
                                                                                flat)
    else:
        out += "\nOnly one stream size: run with `--memory-scaling` to compare 1 GB with 10 GB.\n"
    for note in s.get("notes", []):
        out += "\n" + note + "\n"
    return out + "\n" + commands(cs)


def target_list(targets):
    mark = {"met": "✅ met", "missed": "❌ missed", "not measured": "➖ not measured"}
    out = []
    for t in targets:
        if t["value"] is None:
            val = ""
        elif t.get("unit") == "ms":
            val = ": **%.1f ms**" % t["value"]
        elif t["op"] == "within":
            val = ": **%.3f×** (%+.1f%%)" % (t["value"], 100 * (t["value"] - 1))
        else:
            val = ": **%s**" % f_ratio(t["value"], 3)
        out.append("- %s — %s%s — %s\n" % (mark[t["status"]], t["target"], val, t["basis"]))
    return "".join(out)


def sec_lean(data, targets):
    """Issue 31's table, its targets, then every case."""
    n = data["meta"]["threads"]
    s = data["sections"]["lean"]
    cs = s["cases"]
    lc, ld = s.get("limit_comp_mbps"), s.get("limit_dec_mbps")
    mode = MODE_TITLE.get(s.get("rss_mode"), s.get("rss_mode"))

    def get(row, fam, **kw):
        return find(data, "lean", row=row, family=fam, **kw)

    def speed(c, limit=None, bold=False):
        v = med(c, "mbps")
        if v is None:
            return "–"
        text = ("**%s MB/s**" if bold else "%s MB/s") % f_mbps(v)
        if limit:
            text += "; %s the limit" % f_ratio(ratio(v, limit))
        return text + ("" if c.get("ok_runs") == c.get("n_runs") else " (**%s**)" % f_ok(c))

    def mem(c, bold=False):
        if not c or not c.get("median"):
            return "–" if c is None else f_ok(c)
        text = ("**%s MiB**" if bold else "%s MiB") % f_mib(med(c, "rss_kb"))
        return text + " (%s MB/s)" % f_mbps(med(c, "mbps")) + (
            "" if c.get("ok_runs") == c.get("n_runs") else " (**%s**)" % f_ok(c))

    limit = "%s MB/s (%d × `zstd -b3 -T1` at once)" % (f_mbps(lc), n)
    rows = [["Compress the %s slice, file→/dev/null, level 3" % human(s.get("slice_bytes")),
             speed(get("file", "weir"), lc, True), speed(get("file", "zstd")), speed(get("file", "pzstd")), limit],
            ["Decompress weir's file of it → /dev/null", speed(get("dec", "weir"), ld, True),
             "zstd -d: " + speed(get("dec", "zstd")), "pzstd -d, its own file: " + speed(get("dec", "pzstd")),
             "%s MB/s (%d × `zstd -b3 -T1` at once, decompression)" % (f_mbps(ld), n)]]
    pipe = []
    for fam in ("weir", "zstd"):
        p, f = get("pipe", fam), get("file", fam)
        if not p:
            pipe.append("–")
            continue
        pipe.append("%s: pipe ÷ file %s%s" % (speed(p, None, fam == "weir"),
                                               f_ratio(ratio(med(p, "mbps"), med(f, "mbps"))),
                                               "; %s the limit" % f_ratio(ratio(med(p, "mbps"), lc))
                                               if fam == "weir" else ""))
    rows.append(["Compress through a pipe (`cat SLICE \\| TOOL -c > /dev/null`)", pipe[0], pipe[1], "–",
                 "%s MB/s" % f_mbps(lc)])
    for label in s.get("levels", []):
        rows.append(["Peak RSS, %s slice, `%s`" % (human(s.get("rss_slice_bytes")), label),
                     mem(get("level", "weir", level_label=label), True), mem(get("level", "zstd", level_label=label)),
                     mem(get("level", "pzstd", level_label=label)) if get("level", "pzstd", level_label=label)
                     else "– (no `--fast`)", "–"])
    rows.append(["Peak RSS, %s file, `-3`" % human(s.get("small_bytes")), mem(get("small", "weir"), True),
                 mem(get("small", "zstd")), mem(get("small", "pzstd")), "–"])
    tree = data.get("sections", {}).get("tree")
    if tree:
        def tr(c, bold=False):
            m = (c or {}).get("median")
            if not m:
                return "–" if c is None else f_ok(c)
            text = "wall %s s, CPU %s s, %s MiB" % (f_num(m.get("wall")), f_num(m.get("cpu")), f_mib(m.get("rss_kb")))
            return ("**%s**" % text) if bold else text
        rows.append(["`-r` on the tree of `%s` (%s files, %s; the tree section's runs)" % (
            tree.get("archive"), "{:,}".format(tree.get("files") or 0), human(tree.get("bytes"))), tr(find(data, "tree", family="weir"), True),
            tr(find(data, "tree", family="zstd")), "–", "–"])
    else:
        rows.append(["`-r` on the Linux tree", "not run here: the tree section measures it "
                     "(`--sections lean,tree`)", "", "", ""])
    out = [table(["Case", "weir -T%d" % n, "zstd -T%d" % n, "pzstd -p%d" % n, "The limit"], rows)]
    out.append("\nMedians of %d run(s) per case, tools alternating; the limit measured at the start of every "
               "round; peak RSS from GNU time. The RSS rows are %s; MB/s in brackets.\n\n" % (s["runs"], mode))
    out.append("Targets (issue 31):\n\n" + target_list(targets) + "\n")
    lim = ", ".join("%s/%s" % (f_mbps(r.get("comp_mbps")), f_mbps(r.get("dec_mbps"))) if r.get("ok") else "failed"
                    for r in s.get("limit_runs", []))
    detail = []
    for c in cs:
        detail.append([c["group"].replace("RSS small", "RSS %s file" % human(s.get("small_bytes"))),
                       ("**%s**" % c["tool"]) if c["family"] == "weir" else c["tool"],
                       MODE_TITLE.get(c["mode"], c["mode"]), f_mbps(med(c, "mbps")), f_num(med(c, "wall"), "%.3f"),
                       f_spread(c), f_num(med(c, "cpu"), "%.3f"), f_mib(med(c, "rss_kb")),
                       f_bytes(med(c, "out_bytes")), f_ok(c)])
    out.append("Every case:\n\n" + table(["Case", "Tool", "Mode", "MB/s", "Wall s", "Spread", "CPU s",
                                            "Peak RSS MiB", "Output bytes", "Runs ok"], detail))
    out.append("\nThe limit per round (compression/decompression MB/s, together): %s.\n" % (lim or "–"))
    for note in s.get("notes", []):
        out.append("\n- " + note)
    out.append("\n\n" + commands(cs, ["# inputs (untimed)"] + [x["cmd"] for x in s.get("sources", [])] +
                                    ["# the limit, %d at once, at the start of every round" % n, s.get("limit_cmd", ""),
                                     "# timed"]))
    return "".join(out)


# ---------------------------------------------------------------- document

def render(data, json_name, chart_files, json_rel=None):
    m = data["meta"]
    n = m["threads"]
    L = []
    L.append("# weir benchmark — %s%s\n\n" % (m["date"], " (quick run)" if m.get("quick") else ""))
    if m.get("quick"):
        L.append("> **Quick run** (`--quick`): small corpus and %d run(s) per case. It checks the harness; "
                 "its numbers are not the benchmark.\n\n" % m["runs"])
    corpus = data.get("corpus", {})
    rows = [
        ["Date", m["datetime_utc"]],
        ["Machine", "%s, %d cores (nproc), %s RAM" % (m["cpu_model"], m["nproc"],
                                                     "%.1f GiB" % (m["mem_bytes"] / 2 ** 30) if m.get("mem_bytes")
                                                     else "?")],
        ["OS, kernel", "%s, Linux %s" % (m["os"], m["kernel"])],
        ["weir", "%s — `%s`, commit %s%s" % (m["weir_version"], m["weir_bin"], m["git_commit"],
                                            (", extra args `%s`" % m["weir_args"]) if m.get("weir_args") else "")],
        ["zstd / pzstd", "%s / %s" % (m["zstd_version"].replace("*", "").strip(), m["pzstd_version"])],
    ]
    for key, title in (("main", "Corpus"), ("slice", "Slice (levels 1, 19)"), ("small", "Small file"),
                       ("lean", "Slice (lean, level 3)"), ("lean_rss", "Slice (lean, peak RSS)")):
        c = corpus.get(key)
        if c:
            rows.append([title, "`%s`, %s bytes (%s)%s, sha256 `%s…`" % (
                c["path"], f_bytes(c["bytes"]), human(c["bytes"]),
                (", " + c["source"]) if c.get("source") else "", c["sha256"][:16])])
    rows += [
        ["Threads N", str(n)],
        ["Other load", "%s; load average %s at the start, %s at the end" % (
            ("while the tools ran, other processes used a median %.0f%% (max %.0f%%) of the machine's CPU" % (
                100 * m["other_load_median"], 100 * m["other_load_max"]))
            if m.get("other_load_median") is not None else "not measured",
            " ".join(m.get("loadavg_start") or ["?"]), " ".join(m.get("loadavg_end") or ["?"]))],
        ["Runs", "median of %d per case (small file: %d, memory: %d); tools alternate within each round" % (
            m["runs"], m["small_runs"], m["memory_runs"])],
        ["Command", "`%s` (took %.0f min)" % (m["command"], m.get("elapsed_seconds", 0) / 60)],
    ]
    L.append(table(["", ""], rows) + "\n")

    if (m.get("other_load_median") or 0) > 0.10:
        L.append("> **The machine was busy with other work** (median %.0f%% of its CPU outside the benchmark): "
                 "timings, and most of all the multi-threaded ones, are not reliable. Rerun on an idle "
                 "machine.\n\n" % (100 * m["other_load_median"]))
    failed = [c for s in data.get("sections", {}).values() for c in s.get("cases", [])
              if c.get("ok_runs", 0) < c.get("n_runs", 0)]
    if failed:
        L.append("> **%d case(s) failed or produced wrong output; their medians leave the failed runs out:** %s\n\n"
                 % (len(failed), "; ".join("%s %s %s: %s" % (
                     c["section"], c["tool"], MODE_TITLE.get(c.get("mode"), ""),
                     next((r.get("error") for r in c["runs"] if not r["ok"]), "") or "") for c in failed)))

    targets = data.get("targets") or compute_targets(data)
    L.append("## Targets (issue 5; the tree: issue 16%s)\n\n" % (
        "; lean at every level, issue 31: in its section" if "lean" in data.get("sections", {}) else ""))
    if n != 2:
        L.append("The targets are stated for 2 cores; this run used N = %d.\n\n" % n)
    L.append(target_list([t for t in targets if t.get("section") != "lean"]))
    L.append("\n")

    if chart_files:
        L.append("## Chart\n\n")
        svg = [c for c in chart_files if c.endswith(".svg")]
        L.append("![Throughput per tool](%s)\n\n" % (svg[0] if svg else chart_files[0]))
        if len(chart_files) > 1:
            L.append("Also: %s.\n\n" % ", ".join("[%s](%s)" % (c, c) for c in chart_files[1:]))

    L.append("## Method\n\n")
    L.append(
        "- Every timed command runs as `/usr/bin/time -f '%s' -o TIMEFILE COMMAND`: user + system CPU seconds "
        "and peak RSS (of the tool's process) come from it; wall seconds from a monotonic clock around it "
        "(time's own `%%e` has 10 ms resolution).\n"
        "- MB/s = uncompressed bytes ÷ 10^6 ÷ wall seconds, for compression and decompression alike. "
        "Ratios between tools are ratios of medians from this run.\n"
        "- Inputs are read once before each section (warm page cache); `sync` runs untimed before each run, "
        "outputs go to `bench/work/` on the same disk and are deleted after each run. Before each section's rounds, "
        "its first case that writes a file runs once untimed: the first fresh gigabyte written into the page cache "
        "after a pause cost this VM ~5 s of system time instead of ~1 s, always in the first tool's run.\n"
        "- Each round runs every tool of a case group once, starting with a different tool each round.\n"
        "- Every output is verified: compressed files by `zstd -d | cmp` against the input (or `cmp` against "
        "an output of the same command already verified that way), decompressed files by `cmp` against the "
        "corpus. Output sent to /dev/null is verified by running the same command once more, untimed, with "
        "stdout captured. Memory-section streams are checked with sha256. A run that fails verification is "
        "marked FAILED and left out of the medians.\n"
        "- Modes: file→file is `TOOL IN -o OUT`; file→/dev/null is `TOOL -c IN > /dev/null`; stdin→stdout is "
        "`TOOL < IN > OUT` (`-c` for zstd and pzstd)%s.\n\n" % (
            m.get("time_format", "%e %U %S %M %x"),
            ("; pipe→stdout is `cat IN | TOOL > OUT`" if "pipe" in m.get("modes", []) else "")
            + ("; pipe→/dev/null is `cat IN | TOOL > /dev/null`" if "pipenull" in m.get("modes", []) else "")
            + ("; file→existing file (-f) is `TOOL -f IN -o OUT` where OUT is the same command's output, made "
               "untimed before each run (then `sync`)" if "overwrite" in m.get("modes", []) else "")
            + ("; file→file, then sync is `TOOL IN -o OUT` timed until a `sync` after it returns: until "
               "the output is on disk" if "disk" in m.get("modes", []) else "")))

    secs = data.get("sections", {})
    num = 0

    def head(title, name=None):
        nonlocal num
        num += 1
        L.append("## %d. %s\n\n" % (num, title))
        loads = sorted(r["other_load"] for c in cases(data, name) for r in c.get("runs", [])
                       if r.get("other_load") is not None) if name else []
        if loads:
            L.append("_Other processes used a median %.0f%% (max %.0f%%) of the machine's CPU during these runs._"
                     "\n\n" % (100 * loads[len(loads) // 2], 100 * loads[-1]))

    if "compress" in secs:
        head(secs["compress"]["title"], "compress")
        L.append(compression_tables(data, "compress", ["mode"]) + "\n")
    if "levels" in secs:
        head(secs["levels"]["title"], "levels")
        L.append(compression_tables(data, "levels", ["level", "mode"]) + "\n")
    if "ceiling" in secs:
        head(secs["ceiling"]["title"])
        L.append(sec_ceiling(data) + "\n")
    if "decompress" in secs:
        head(secs["decompress"]["title"], "decompress")
        L.append(sec_decompress(data) + "\n")
    if "scaling" in secs:
        head(secs["scaling"]["title"], "scaling")
        L.append(sec_scaling(data) + "\n")
    if "small" in secs:
        head(secs["small"]["title"], "small")
        L.append(sec_small(data) + "\n")
    if "memory" in secs:
        head(secs["memory"]["title"], "memory")
        L.append(sec_memory(data) + "\n")
    if "tree" in secs:
        head(secs["tree"]["title"], "tree")
        L.append(sec_tree(data) + "\n")
    if "seek" in secs:
        head(secs["seek"]["title"], "seek")
        L.append(sec_seek(data) + "\n")
    if "lean" in secs:
        head(secs["lean"]["title"], "lean")
        L.append(sec_lean(data, [t for t in targets if t.get("section") == "lean"]) + "\n")
    L.append("---\nRaw measurements (every run): [%s](%s). Regenerate this page with "
             "`scripts/bench --report-only %s`.\n" % (json_name, json_name, json_rel or json_name))
    return "".join(L)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: report.py RESULTS.json > RESULTS.md")
    d = json.load(open(sys.argv[1]))
    d["targets"] = compute_targets(d)
    sys.stdout.write(render(d, os.path.basename(sys.argv[1]), []))
